/* `make bench-parse`, the reference: cmark-gfm parsing the same document to
 * its node tree (no rendering), with the table, strikethrough, autolink and
 * tasklist extensions attached. Prints the median MB/s of REPS parses.
 *
 * usage: parse_cmark FILE [REPS] */
#include <cmark-gfm.h>
#include <cmark-gfm-core-extensions.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: parse_cmark FILE [REPS]\n"); return 2; }
    int reps = argc > 2 ? atoi(argv[2]) : 9;
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    char *buf = malloc(n);
    if (fread(buf, 1, n, f) != (size_t)n) { perror("read"); return 1; }
    fclose(f);
    cmark_gfm_core_extensions_ensure_registered();
    const char *names[] = {"table", "strikethrough", "autolink", "tasklist"};
    double *mbs = malloc(sizeof(double) * reps);
    for (int r = 0; r < reps; r++) {
        cmark_parser *p = cmark_parser_new(CMARK_OPT_DEFAULT);
        for (int i = 0; i < 4; i++) {
            cmark_syntax_extension *e = cmark_find_syntax_extension(names[i]);
            if (!e) { fprintf(stderr, "no extension %s\n", names[i]); return 1; }
            cmark_parser_attach_syntax_extension(p, e);
        }
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        cmark_parser_feed(p, buf, n);
        cmark_node *doc = cmark_parser_finish(p);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
        mbs[r] = n / 1e6 / s;
        cmark_node_free(doc);
        cmark_parser_free(p);
    }
    qsort(mbs, reps, sizeof(double), cmp);
    printf("%.1f\n", mbs[reps / 2]);
    return 0;
}
