# Global sanitizer flags, selected by the cache variable KMEM_SANITIZE:
#   ""                   no sanitizer (default)
#   "address,undefined"  ASan + UBSan (any mix of address/undefined/leak works)
#   "thread"             TSan
# The flags go on every target (library, tests, bench, tools) so that
# instrumented and uninstrumented code never get mixed.  -O1 -g comes after the
# build type's flags and wins.  Runtime options (ASAN_OPTIONS, ...) are set by
# scripts/test.sh, not here.
if(NOT KMEM_SANITIZE)
  return()
endif()

string(REPLACE "," ";" _kmem_san_list "${KMEM_SANITIZE}")
foreach(_s IN LISTS _kmem_san_list)
  if(NOT _s MATCHES "^(address|undefined|leak|thread)$")
    message(FATAL_ERROR "KMEM_SANITIZE: unknown sanitizer '${_s}'")
  endif()
endforeach()
if("thread" IN_LIST _kmem_san_list AND ("address" IN_LIST _kmem_san_list
                                        OR "leak" IN_LIST _kmem_san_list))
  message(FATAL_ERROR "KMEM_SANITIZE: thread cannot be combined with address/leak")
endif()

set(_kmem_san_flags -fsanitize=${KMEM_SANITIZE} -fno-omit-frame-pointer -O1 -g)
if(NOT "thread" IN_LIST _kmem_san_list)
  list(APPEND _kmem_san_flags -fno-sanitize-recover=all)
endif()
add_compile_options(${_kmem_san_flags})
add_link_options(-fsanitize=${KMEM_SANITIZE})
message(STATUS "kmem: sanitizers enabled: ${_kmem_san_flags}")
