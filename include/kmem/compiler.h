/* SPDX-License-Identifier: MIT */
#ifndef KMEM_COMPILER_H
#define KMEM_COMPILER_H

#ifndef KMEM_API
#define KMEM_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
#define KMEM_BEGIN_DECLS extern "C" {
#define KMEM_END_DECLS }
#else
#define KMEM_BEGIN_DECLS
#define KMEM_END_DECLS
#endif

#endif /* KMEM_COMPILER_H */
