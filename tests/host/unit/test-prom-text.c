// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the Prometheus text helpers behind `cetctl audit --label`:
 * label name rules and label value escaping.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom-text.h"

#include "check.h"

static void check_escape(const char *in, const char *want)
{
	char *got = prom_label_value_escape(in);

	CHECK(got && strcmp(got, want) == 0);
	if (got && strcmp(got, want) != 0)
		fprintf(stderr, "  escape: got '%s', want '%s'\n", got, want);
	free(got);
}

int main(void)
{
	char *list = NULL;

	CHECK(prom_label_name_valid("job"));
	CHECK(prom_label_name_valid("_x"));
	CHECK(prom_label_name_valid("A_b9"));
	CHECK(!prom_label_name_valid(""));
	CHECK(!prom_label_name_valid("9a"));
	CHECK(!prom_label_name_valid("a-b"));
	CHECK(!prom_label_name_valid("a b"));
	CHECK(!prom_label_name_valid("a.b"));
	CHECK(!prom_label_name_valid("__name__"));
	CHECK(!prom_label_name_valid("__"));
	CHECK(!prom_label_name_valid("\xc3\xa9t\xc3\xa9"));

	check_escape("", "");
	check_escape("plain", "plain");
	check_escape("a\\b", "a\\\\b");
	check_escape("say \"hi\"", "say \\\"hi\\\"");
	check_escape("two\nlines", "two\\nlines");
	check_escape("\\n", "\\\\n");
	/* UTF-8 and tabs pass unchanged: the format allows them */
	check_escape("caf\xc3\xa9\tx", "caf\xc3\xa9\tx");

	CHECK(prom_labels_add(&list, "a", "1") == 0);
	CHECK(prom_labels_add(&list, "b", "x\"y,a=\\") == 0);
	CHECK(list && strcmp(list, "a=\"1\",b=\"x\\\"y,a=\\\\\"") == 0);
	/* a quoted "a=" inside a value is not a label named a... */
	CHECK(prom_labels_add(&list, "c", "") == 0);
	/* ...but the real ones are found */
	CHECK(prom_labels_add(&list, "a", "2") == -EEXIST);
	CHECK(prom_labels_add(&list, "b", "2") == -EEXIST);
	CHECK(prom_labels_add(&list, "c", "2") == -EEXIST);
	CHECK(prom_labels_add(&list, "9", "2") == -EINVAL);
	CHECK(list && strcmp(list, "a=\"1\",b=\"x\\\"y,a=\\\\\",c=\"\"") == 0);
	free(list);

	printf("test-prom-text: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
