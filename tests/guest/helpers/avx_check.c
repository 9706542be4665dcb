// SPDX-License-Identifier: GPL-2.0
/*
 * avx_check [ITERATIONS] - do the YMM registers survive a context switch?
 *
 * Loads ymm0-15 with a known pattern, sleeps in nanosleep (the task is switched out:
 * XSAVE(S) on the way out, XRSTOR(S) on the way back), stores the registers and compares.
 * A child wakes every 1 ms and loads its own YMM pattern, so that the registers really
 * are taken over by another task (else the kernel may skip the XRSTOR(S) when nothing
 * else touched the FPU in between).
 * Bochs 2.7 stores compacted XSAVEC/XSAVES components 160 bytes too low while XRSTORS
 * reads them at the architectural offsets, so without the Bochs workaround (which keeps
 * AVX off with clearcpuid=avx) YMM state comes back corrupted; on QEMU/real CPUs it must
 * always survive.
 *
 * Output: "[FAIL] ..." for the first corrupted round trips, then one
 * "[PASS|FAIL] avx_check: N/M nanosleep round trips corrupted YMM state" line.
 * Exit: 0 no corruption, 1 corruption seen, 77 skipped (no AVX, or the OS did not enable
 * YMM state in XCR0 — e.g. booted with clearcpuid=avx).
 */
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NREG	16
#define YMM	32

static uint64_t read_xcr0(void)
{
	uint32_t lo, hi;

	asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

/* the other task: different YMM contents, many wake-ups */
static void noise(void)
{
	static uint8_t junk[YMM] __attribute__((aligned(32)));
	struct timespec ts = { 0, 1000000 };

	memset(junk, 0xa5, sizeof(junk));
	for (;;) {
		asm volatile("vmovdqa %0, %%ymm0\n\t" "vmovdqa %0, %%ymm1\n\t"
			     "vmovdqa %0, %%ymm7\n\t" "vmovdqa %0, %%ymm15"
			     : : "m"(junk) : "xmm0", "xmm1", "xmm7", "xmm15");
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	static uint8_t in[NREG * YMM] __attribute__((aligned(32)));
	static uint8_t out[NREG * YMM] __attribute__((aligned(32)));
	struct timespec nap = { 0, 100000 };
	int iters = argc > 1 ? atoi(argv[1]) : 200, bad = 0;
	unsigned int a, b, c, d;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX)) {
		printf("SKIP: avx_check: CPUID reports no AVX or no OSXSAVE (AVX off: clearcpuid=avx?)\n");
		return 77;
	}
	if ((read_xcr0() & 6) != 6) {
		printf("SKIP: avx_check: XCR0=%#llx does not enable SSE+YMM state\n",
		       (unsigned long long)read_xcr0());
		return 77;
	}
	pid_t other = fork();

	if (other == 0)
		noise();
	for (int it = 0; it < iters; it++) {
		long ret;

		for (int i = 0; i < (int)sizeof(in); i++)
			in[i] = (uint8_t)(i * 13 + it * 7 + 1);
		memset(out, 0, sizeof(out));
		/* load all 16 YMM registers, nanosleep(2) via a raw syscall, store them again */
		asm volatile(
			"vmovdqa   0(%[i]), %%ymm0\n\t"  "vmovdqa  32(%[i]), %%ymm1\n\t"
			"vmovdqa  64(%[i]), %%ymm2\n\t"  "vmovdqa  96(%[i]), %%ymm3\n\t"
			"vmovdqa 128(%[i]), %%ymm4\n\t"  "vmovdqa 160(%[i]), %%ymm5\n\t"
			"vmovdqa 192(%[i]), %%ymm6\n\t"  "vmovdqa 224(%[i]), %%ymm7\n\t"
			"vmovdqa 256(%[i]), %%ymm8\n\t"  "vmovdqa 288(%[i]), %%ymm9\n\t"
			"vmovdqa 320(%[i]), %%ymm10\n\t" "vmovdqa 352(%[i]), %%ymm11\n\t"
			"vmovdqa 384(%[i]), %%ymm12\n\t" "vmovdqa 416(%[i]), %%ymm13\n\t"
			"vmovdqa 448(%[i]), %%ymm14\n\t" "vmovdqa 480(%[i]), %%ymm15\n\t"
			"mov $35, %%eax\n\t"		/* __NR_nanosleep */
			"mov %[ts], %%rdi\n\t"
			"xor %%esi, %%esi\n\t"
			"syscall\n\t"
			"vmovdqa %%ymm0,    0(%[o])\n\t" "vmovdqa %%ymm1,   32(%[o])\n\t"
			"vmovdqa %%ymm2,   64(%[o])\n\t" "vmovdqa %%ymm3,   96(%[o])\n\t"
			"vmovdqa %%ymm4,  128(%[o])\n\t" "vmovdqa %%ymm5,  160(%[o])\n\t"
			"vmovdqa %%ymm6,  192(%[o])\n\t" "vmovdqa %%ymm7,  224(%[o])\n\t"
			"vmovdqa %%ymm8,  256(%[o])\n\t" "vmovdqa %%ymm9,  288(%[o])\n\t"
			"vmovdqa %%ymm10, 320(%[o])\n\t" "vmovdqa %%ymm11, 352(%[o])\n\t"
			"vmovdqa %%ymm12, 384(%[o])\n\t" "vmovdqa %%ymm13, 416(%[o])\n\t"
			"vmovdqa %%ymm14, 448(%[o])\n\t" "vmovdqa %%ymm15, 480(%[o])\n\t"
			"vzeroupper"
			: "=a"(ret)
			: [i] "r"(in), [o] "r"(out), [ts] "r"(&nap)
			: "rdi", "rsi", "rcx", "r11", "memory",
			  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
			  "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
		(void)ret;
		if (memcmp(in, out, sizeof(in))) {
			int first = 0;

			while (in[first] == out[first])
				first++;
			if (++bad <= 5)
				printf("[FAIL] avx_check: round trip %d: YMM state corrupted (first bad byte %d, ymm%d)\n",
				       it, first, first / YMM);
		}
	}
	if (other > 0) {
		kill(other, SIGKILL);
		waitpid(other, NULL, 0);
	}
	printf("[%s] avx_check: %d/%d nanosleep round trips corrupted YMM state\n",
	       bad ? "FAIL" : "PASS", bad, iters);
	return bad ? 1 : 0;
}
