// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A main() for the fuzz targets when libFuzzer is not there (gcc, the
 * normal and the ASan builds): run LLVMFuzzerTestOneInput once on each
 * file named on the command line, or on each file of each directory
 * named. Used by ctest to replay the seed corpus and the crashes kept in
 * tests/fuzz/regressions/. Exits 1 when a path cannot be read.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path, size_t *count)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return -1;
	}
	do {
		if (len == cap) {
			uint8_t *nb;

			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	(*count)++;
	return 0;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *de;

		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			rc = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i], &count))
				rc = 1;
			continue;
		}
		d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			rc = 1;
			continue;
		}
		while ((de = readdir(d)) != NULL) {
			char path[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
			    run_file(path, &count))
				rc = 1;
		}
		closedir(d);
	}
	printf("replayed %zu inputs\n", count);
	return rc;
}
