// SPDX-License-Identifier: GPL-2.0
/*
 * host.c: the few C library services the shim needs, in a unit compiled
 * with ordinary user-space flags (the kernel units cannot include libc
 * headers).
 */
#include <stdio.h>
#include <stdlib.h>

void *tk_host_alloc(unsigned long size, unsigned long align)
{
	void *p = aligned_alloc(align, (size + align - 1) / align * align);

	if (!p) {
		fprintf(stderr, "kernel oracle: out of memory (%lu bytes)\n", size);
		abort();
	}
	return p;
}

void tk_host_die(const char *what, const char *file, int line)
{
	fprintf(stderr, "kernel oracle: %s at %s:%d\n", what, file, line);
	abort();
}
