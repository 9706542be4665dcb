// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Widths on a terminal: the terminal's width as util-linux takes it
 * (COLUMNS), and the sentence columns (CETCTL_FL_SENTENCE) cut at a word,
 * never inside their head, in what the other columns leave of it: the
 * others measured by a dry run of libsmartcols. Calls no other part.
 */
#include <errno.h>
#include <langinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "table-internal.h"

/*
 * The width of a terminal, as util-linux does it: libsmartcols asks the
 * terminal; COLUMNS, when set, says what the width is (a terminal that
 * does not know, or a user who wants another). Output that is not a
 * terminal keeps no width at all: nothing cut, nothing padded.
 */
void table_set_termwidth(struct libscols_table *tb)
{
	const char *c = getenv("COLUMNS");
	char *end;
	long n;

	if (!c || !*c || !isatty(STDOUT_FILENO))
		return;
	errno = 0;
	n = strtol(c, &end, 10);
	if (!errno && !*end && n > 0 && n <= 100000)
		scols_table_set_termwidth(tb, (size_t)n);
}

/*
 * The width of @s as libsmartcols shows it: a byte that is not part of a
 * printable character is encoded as \xNN, four columns.
 */
static size_t shown_width(const char *s, size_t len)
{
	mbstate_t st;
	size_t w = 0;

	memset(&st, 0, sizeof(st));
	while (len) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s, len, &st);
		int cw;

		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			memset(&st, 0, sizeof(st));
			w += 4;
			s++, len--;
			continue;
		}
		cw = wcwidth(wc);
		w += cw < 0 ? 4 * n : (size_t)cw;
		s += n, len -= n;
	}
	return w;
}

/* what a cut sentence keeps at least, when its head is shorter */
#define SENTENCE_MIN	24

/*
 * The length of a sentence's head: up to its first ':', ';' or " (";
 * without one, its words within SENTENCE_MIN columns (its first word at
 * least).
 */
static size_t head_len(const char *s)
{
	size_t n = strcspn(s, ":;("), i, w = 0;

	if (s[n]) {
		while (n && s[n - 1] == ' ')
			n--;
		return n;
	}
	n = strcspn(s, " ");
	for (i = n; s[i]; i++)
		if (s[i] == ' ' && !strchr(" ,", s[i - 1])) {
			if (shown_width(s, i) > SENTENCE_MIN)
				break;
			w = i;
		}
	if (!s[i] && shown_width(s, i) <= SENTENCE_MIN)
		return i;
	return w > n ? w : n;
}

/*
 * @s cut to at most @limit columns with @ell at the end, at a word
 * boundary after its head; the head and @ell when even that is wider.
 * NULL when @s fits (or on ENOMEM: the cell stays whole).
 */
static char *fit_sentence(const char *s, size_t limit, const char *ell)
{
	size_t len = strlen(s), head = head_len(s), best = head, i;
	size_t ellw = shown_width(ell, strlen(ell));
	char *out;

	if (head == len || shown_width(s, len) <= limit)
		return NULL;
	for (i = head; i < len; i++) {
		size_t end = i;

		if (s[i] != ' ')
			continue;
		/* the words before this space, without trailing punctuation */
		while (end > head && strchr(" :;,", s[end - 1]))
			end--;
		if (shown_width(s, end) + ellw > limit)
			break;
		best = end;
	}
	if (asprintf(&out, "%.*s%s", (int)best, s, ell) < 0)
		return NULL;
	return out;
}

static bool is_sentence(const struct cetctl_table *t, size_t i)
{
	return t->cols[t->ids[i]].flags & CETCTL_FL_SENTENCE;
}

/*
 * For each sentence column: @need, its widest cell (or heading); @room,
 * what the dry run leaves it: its widest head and some words more
 * (SENTENCE_MIN columns, less when its sentences are all shorter).
 */
static void sentence_widths(struct cetctl_table *t, size_t *need, size_t *room)
{
	struct libscols_iter *itr = scols_new_iter(SCOLS_ITER_FORWARD);
	struct libscols_line *ln;
	size_t i;

	for (i = 0; i < t->nids; i++)
		need[i] = room[i] = is_sentence(t, i) ? strlen(t->cols[t->ids[i]].name) : 0;
	while (itr && scols_table_next_line(t->tb, itr, &ln) == 0)
		for (i = 0; i < t->nids; i++) {
			const char *d = scols_cell_get_data(scols_line_get_cell(ln, i));
			size_t w, h;

			if (!d || !is_sentence(t, i))
				continue;
			w = shown_width(d, strlen(d));
			h = shown_width(d, head_len(d)) + (head_len(d) < strlen(d));
			if (h < SENTENCE_MIN)
				h = SENTENCE_MIN;
			if (w > need[i])
				need[i] = w;
			if ((w < h ? w : h) > room[i])
				room[i] = w < h ? w : h;
		}
	scols_free_iter(itr);
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* The width of column @i's widest cell or heading: what it takes uncut. */
static size_t natural_width(struct cetctl_table *t, size_t i)
{
	struct libscols_iter *itr = scols_new_iter(SCOLS_ITER_FORWARD);
	struct libscols_line *ln;
	const char *name = t->cols[t->ids[i]].name;
	size_t w = shown_width(name, strlen(name));

	if (!itr)
		return SIZE_MAX;	/* then libsmartcols' width stands */
	while (scols_table_next_line(t->tb, itr, &ln) == 0) {
		const char *d = scols_cell_get_data(scols_line_get_cell(ln, i));
		size_t dw = d ? shown_width(d, strlen(d)) : 0;

		if (dw > w)
			w = dw;
	}
	scols_free_iter(itr);
	return w;
}

/*
 * The width the columns other than the sentences take, separators
 * included, as libsmartcols lays them out in @width columns: a dry run
 * into memory with the sentences hidden. 0 when it could not be run.
 * libsmartcols gives the last column whatever the terminal has left, so
 * a column counts no more than its widest cell: the slack is the
 * sentences' to share.
 */
static size_t others_width(struct cetctl_table *t, FILE *out, size_t width)
{
	struct libscols_table *tb = t->tb;
	size_t term = scols_table_get_termwidth(tb), used = 0, i;
	char *dry = NULL;
	size_t drylen;
	FILE *mem = open_memstream(&dry, &drylen);

	if (!mem)
		return 0;
	for (i = 0; i < t->nids; i++)
		if (is_sentence(t, i))
			scols_column_set_flags(scols_table_get_column(tb, i),
					       (t->cols[t->ids[i]].flags & ~CETCTL_FL_SENTENCE &
						~SCOLS_FL_TRUNC) | SCOLS_FL_HIDDEN);
	scols_table_set_stream(tb, mem);
	scols_table_set_termforce(tb, SCOLS_TERMFORCE_ALWAYS);
	scols_table_set_termwidth(tb, width);
	scols_print_table(tb);
	scols_table_set_termforce(tb, SCOLS_TERMFORCE_AUTO);
	scols_table_set_termwidth(tb, term);
	scols_table_set_stream(tb, out);
	fclose(mem);
	free(dry);
	for (i = 0; i < t->nids; i++) {
		struct libscols_column *cl = scols_table_get_column(tb, i);

		if (is_sentence(t, i))	/* shown again, never cut by libsmartcols */
			scols_column_set_flags(cl, t->cols[t->ids[i]].flags &
					       ~CETCTL_FL_SENTENCE & ~SCOLS_FL_TRUNC);
		else
			used += min_size(scols_column_get_width(cl), natural_width(t, i));
	}
	return used + t->nids - 1;	/* one space between columns */
}

/*
 * Share @avail columns between the sentence columns: one that needs less
 * than an even share gets what it needs, the others split the rest.
 */
static void share_out(struct cetctl_table *t, const size_t *need, size_t avail, size_t *give)
{
	size_t i, k = 0;
	bool settled;

	for (i = 0; i < t->nids; i++) {
		give[i] = SIZE_MAX;
		k += is_sentence(t, i);
	}
	do {
		settled = false;
		for (i = 0; k && i < t->nids; i++)
			if (is_sentence(t, i) && give[i] == SIZE_MAX && need[i] <= avail / k) {
				give[i] = need[i];
				avail -= need[i];
				k--;
				settled = true;
			}
	} while (settled);
	for (i = 0; i < t->nids; i++)
		if (give[i] == SIZE_MAX)
			give[i] = k ? avail / k : 0;
}

/*
 * On a terminal, give the sentence columns what the other columns leave
 * of its width (share_out()) and cut each longer sentence there, as
 * fit_sentence() does. The other columns' widths are libsmartcols' own,
 * from a dry run that leaves room for the sentences' heads.
 */
void table_fit_sentences(struct cetctl_table *t, FILE *out)
{
	size_t need[CETCTL_MAX_COLUMNS], room[CETCTL_MAX_COLUMNS], give[CETCTL_MAX_COLUMNS];
	size_t term, want = 0, nsent = 0, used, i;
	const char *cs = nl_langinfo(CODESET);
	const char *ell = cs && !strcmp(cs, "UTF-8") ? "\u2026" : "...";
	struct libscols_iter *itr;
	struct libscols_line *ln;

	if (scols_table_is_raw(t->tb) || !isatty(fileno(out)))
		return;
	term = scols_table_get_termwidth(t->tb);
	for (i = 0; i < t->nids; i++)
		nsent += is_sentence(t, i);
	if (!term || !nsent)
		return;
	sentence_widths(t, need, room);
	for (i = 0; i < t->nids; i++)
		want += room[i];
	used = others_width(t, out, term > want + nsent ? term - want - nsent : term);
	if (!used)
		return;
	share_out(t, need, used < term ? term - used : 0, give);
	itr = scols_new_iter(SCOLS_ITER_FORWARD);
	while (itr && scols_table_next_line(t->tb, itr, &ln) == 0)
		for (i = 0; i < t->nids; i++) {
			const char *d = scols_cell_get_data(scols_line_get_cell(ln, i));
			char *cut;

			if (!d || !is_sentence(t, i))
				continue;
			cut = fit_sentence(d, give[i], ell);
			if (cut && scols_line_refer_data(ln, i, cut) != 0)
				free(cut);
		}
	scols_free_iter(itr);
}
