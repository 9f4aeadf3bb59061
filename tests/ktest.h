/* SPDX-License-Identifier: MIT */
/*
 * A tiny test harness: KTEST(name) defines a case, KT_ASSERT* check, and
 * ktest_main() runs every case and ends with "N passed, M failed".
 */
#ifndef KTEST_H
#define KTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ktest_case {
	const char *name;
	void (*fn)(void);
};

#define KTEST_MAX 256
extern struct ktest_case ktest_cases[KTEST_MAX];
extern int ktest_nr_cases;
extern int ktest_failed_now;

#define KTEST(fn_name)								\
	static void fn_name(void);						\
	__attribute__((constructor)) static void fn_name##_register(void)	\
	{									\
		ktest_cases[ktest_nr_cases].name = #fn_name;			\
		ktest_cases[ktest_nr_cases++].fn = fn_name;			\
	}									\
	static void fn_name(void)

#define KT_FAIL(...) do {							\
	fprintf(stderr, "  FAIL %s:%d: ", __FILE__, __LINE__);			\
	fprintf(stderr, __VA_ARGS__);						\
	fprintf(stderr, "\n");							\
	ktest_failed_now = 1;							\
} while (0)

#define KT_ASSERT(cond) do {							\
	if (!(cond)) { KT_FAIL("assertion failed: %s", #cond); return; }	\
} while (0)

#define KT_EXPECT(cond) do {							\
	if (!(cond)) KT_FAIL("expectation failed: %s", #cond);			\
} while (0)

#define KT_ASSERT_EQ(a, b) do {							\
	long long __a = (long long)(a), __b = (long long)(b);			\
	if (__a != __b) { KT_FAIL("%s == %s: %lld != %lld", #a, #b, __a, __b); return; } \
} while (0)

#define KT_ASSERT_STREQ(a, b) do {						\
	const char *__a = (a), *__b = (b);					\
	if (strcmp(__a, __b)) {							\
		KT_FAIL("%s == %s:\n--- got:\n%s\n--- expected:\n%s", #a, #b, __a, __b); \
		return;								\
	}									\
} while (0)

/* Define the harness's globals and main() in exactly one file per test. */
#define KTEST_MAIN(setup)							\
	struct ktest_case ktest_cases[KTEST_MAX];				\
	int ktest_nr_cases;							\
	int ktest_failed_now;							\
	int main(void)								\
	{									\
		int passed = 0, failed = 0;					\
		setup;								\
		for (int i = 0; i < ktest_nr_cases; i++) {			\
			ktest_failed_now = 0;					\
			ktest_cases[i].fn();					\
			fprintf(stderr, "%s %s\n", ktest_failed_now ? "FAIL" : "ok  ", ktest_cases[i].name); \
			if (ktest_failed_now) failed++; else passed++;		\
		}								\
		printf("%d passed, %d failed\n", passed, failed);		\
		return failed ? 1 : 0;						\
	}

#endif /* KTEST_H */
