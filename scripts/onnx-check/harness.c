/* harness.c — one call of the recurrent family's C scan (src/c/recurrent.c) over stdin/stdout, for
 * check.py. stdin (little-endian int32 then float32): rule n d dv g_cols has_s0, scale, then q [n, d],
 * k [n, d], v [n, dv], g [n, g_cols], beta [n], s0 [d, dv] when has_s0. stdout: y [n, dv], then the
 * final state [d, dv], float32. */
#include <stdio.h>
#include <stdlib.h>

#include "../../src/c/internal.h"

static int read_all(void *p, size_t count) { return fread(p, 4, count, stdin) == count; }

int main(void) {
    int32_t head[6];
    float scale;
    if (!read_all(head, 6) || !read_all(&scale, 1)) return 2;
    int rule = head[0], n = head[1], d = head[2], dv = head[3], g_cols = head[4], has_s0 = head[5];
    if (rule < 0 || rule >= RECURRENT_RULE_COUNT || n < 1 || d < 1 || dv < 1 || g_cols < 1) return 2;
    float *q = malloc(4 * (size_t)n * d), *k = malloc(4 * (size_t)n * d), *v = malloc(4 * (size_t)n * dv);
    float *g = malloc(4 * (size_t)n * g_cols), *beta = malloc(4 * (size_t)n), *s0 = has_s0 ? malloc(4 * (size_t)d * dv) : 0;
    float *y = malloc(4 * (size_t)n * dv), *S = malloc(4 * (size_t)d * dv);
    float *scratch = malloc(4 * (size_t)attn_recurrent_scan_scratch(d, dv));
    if (!read_all(q, (size_t)n * d) || !read_all(k, (size_t)n * d) || !read_all(v, (size_t)n * dv) ||
        !read_all(g, (size_t)n * g_cols) || !read_all(beta, (size_t)n) || (s0 && !read_all(s0, (size_t)d * dv)))
        return 2;
    attn_recurrent_io io = {n, d, dv, g_cols, scale, q, k, v, g, beta, s0, y};
    attn_recurrent_scan((recurrent_rule)rule, &io, 0, dv, S, scratch);
    fwrite(y, 4, (size_t)n * dv, stdout);
    fwrite(S, 4, (size_t)d * dv, stdout);
    return 0;
}
