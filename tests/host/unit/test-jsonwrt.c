// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the JSON writer (src/jsonwrt.c) that every -J document
 * goes through: the one string escaper, commas and indentation of nested
 * containers in each layout, empty containers, the numbers.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonwrt.h"

#include "check.h"

static char *mbuf;
static size_t mlen;
static FILE *mem;
static struct jsonwrt w;

static void begin(void)
{
	mem = open_memstream(&mbuf, &mlen);
	jsonwrt_init(&w, mem);
}

/* Compare what was written since begin() with @want. */
static void expect(int line, const char *want)
{
	jsonwrt_flush(&w);
	fclose(mem);
	checks++;
	if (strcmp(mbuf, want) != 0) {
		failures++;
		fprintf(stderr, "%s:%d: got\n%s\n---- want\n%s\n----\n", __FILE__, line, mbuf, want);
	}
	free(mbuf);
	mbuf = NULL;
}

/* One string as an array element of a LINE array. */
static void check_string(int line, const char *in, const char *want)
{
	begin();
	jsonwrt_string(&w, NULL, in);
	expect(line, want);
}

int main(void)
{
	/* escaping: quotes, backslash, control characters, DEL */
	check_string(__LINE__, "plain", "\"plain\"");
	check_string(__LINE__, "", "\"\"");
	check_string(__LINE__, "a\"b\\c", "\"a\\\"b\\\\c\"");
	check_string(__LINE__, "\x01\t\n\x1f\x7f", "\"\\u0001\\u0009\\u000a\\u001f\\u007f\"");
	check_string(__LINE__, "/", "\"/\"");
	check_string(__LINE__, NULL, "null");
	/* UTF-8 passes through; bytes that are not UTF-8 become U+FFFD */
	check_string(__LINE__, "caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80\"");
	check_string(__LINE__, "a\xff" "b\"", "\"a\xef\xbf\xbd" "b\\\"\"");
	check_string(__LINE__, "\xc3", "\"\xef\xbf\xbd\"");
	/* a counted string stops at its length */
	begin();
	jsonwrt_string_n(&w, "k", "abc\ndef", 3);
	expect(__LINE__, "\"k\": \"abc\"");

	/* the document: BLOCK objects and arrays, indented 3 a level */
	begin();
	jsonwrt_object_open(&w, NULL, JSONWRT_BLOCK);
	jsonwrt_array_open(&w, "rows", JSONWRT_BLOCK);
	jsonwrt_object_open(&w, NULL, JSONWRT_BLOCK);
	jsonwrt_ulong(&w, "pid", 1);
	jsonwrt_bool(&w, "on", true);
	jsonwrt_null(&w, "x");
	jsonwrt_object_close(&w);
	jsonwrt_object_open(&w, NULL, JSONWRT_BLOCK);
	jsonwrt_bool(&w, "on", false);
	jsonwrt_object_close(&w);
	jsonwrt_array_close(&w);
	jsonwrt_array_open(&w, "errors", JSONWRT_BLOCK);
	jsonwrt_array_close(&w);
	jsonwrt_object_close(&w);
	expect(__LINE__,
	       "{\n"
	       "   \"rows\": [\n"
	       "      {\n"
	       "         \"pid\": 1,\n"
	       "         \"on\": true,\n"
	       "         \"x\": null\n"
	       "      },\n"
	       "      {\n"
	       "         \"on\": false\n"
	       "      }\n"
	       "   ],\n"
	       "   \"errors\": []\n"
	       "}\n");

	/* LINE and TIGHT containers inside a BLOCK one; empty ones */
	begin();
	jsonwrt_object_open(&w, NULL, JSONWRT_BLOCK);
	jsonwrt_object_open(&w, "summary", JSONWRT_LINE);
	jsonwrt_long(&w, "a", -5);
	jsonwrt_object_open(&w, "in", JSONWRT_LINE);
	jsonwrt_number(&w, "n", "42");
	jsonwrt_number(&w, "m", "");
	jsonwrt_object_close(&w);
	jsonwrt_array_open(&w, "words", JSONWRT_LINE);
	jsonwrt_string(&w, NULL, "x");
	jsonwrt_string(&w, NULL, "y");
	jsonwrt_array_close(&w);
	jsonwrt_array_open(&w, "tight", JSONWRT_TIGHT);
	jsonwrt_string(&w, NULL, "ibt");
	jsonwrt_string(&w, NULL, "shstk");
	jsonwrt_array_close(&w);
	jsonwrt_array_open(&w, "none", JSONWRT_LINE);
	jsonwrt_array_close(&w);
	jsonwrt_object_open(&w, "empty", JSONWRT_BLOCK);
	jsonwrt_object_close(&w);
	jsonwrt_object_close(&w);
	jsonwrt_object_close(&w);
	expect(__LINE__,
	       "{\n"
	       "   \"summary\": {\"a\": -5, \"in\": {\"n\": 42, \"m\": null}, \"words\": [\"x\", \"y\"], "
	       "\"tight\": [\"ibt\",\"shstk\"], \"none\": [], \"empty\": {}}\n"
	       "}\n");

	/* an empty document; member names are escaped too */
	begin();
	jsonwrt_object_open(&w, NULL, JSONWRT_BLOCK);
	jsonwrt_object_close(&w);
	expect(__LINE__, "{}\n");
	begin();
	jsonwrt_object_open(&w, NULL, JSONWRT_LINE);
	jsonwrt_ulong(&w, "q\"", ULONG_MAX);
	jsonwrt_long(&w, "min", LONG_MIN);
	jsonwrt_object_close(&w);
	expect(__LINE__, "{\"q\\\"\": 18446744073709551615, \"min\": -9223372036854775808}\n");

	/* more than the buffer holds, in pieces and in one string */
	{
		size_t big = 100000;
		char *s = malloc(big + 1), *want = malloc(big + 4);

		memset(s, 'a', big);
		s[big] = '\0';
		snprintf(want, big + 4, "\"%s\"", s);
		check_string(__LINE__, s, want);
		free(s);
		free(want);
	}

	printf("test-jsonwrt: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
