# Run at install time (see install(CODE) in the top-level CMakeLists.txt):
# writes kmem.pc for the prefix being installed to and installs it into
# <prefix>/lib/pkgconfig (honours DESTDIR).  Inputs: KMEM_PC_IN, KMEM_PC_OUT,
# KMEM_VERSION; CMAKE_INSTALL_PREFIX is the install-time prefix.
set(KMEM_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
configure_file("${KMEM_PC_IN}" "${KMEM_PC_OUT}" @ONLY)
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/pkgconfig" TYPE FILE
     FILES "${KMEM_PC_OUT}")
