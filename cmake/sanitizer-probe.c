/* Tiny threaded program used by scripts/test.sh to check that a sanitizer
 * runtime starts on this machine (TSan, for one, can die at startup with
 * "unexpected memory mapping" when the kernel's mmap ASLR is too wide). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	char *p = malloc(64);

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	free(p);
	return counter == 2000 ? 0 : 1;
}
