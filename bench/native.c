/* native.c — times the attnlab C core compiled natively (gcc -O3 -march=native), as a reference
 * for the WebAssembly builds (not a competitor). Built and run by bench/run.mjs:
 *
 *   native N VARIANT[,VARIANT...] MIN_TIME_MS MIN_REPS WARM_MS
 *
 * Inputs are uniform in [-1, 1) from the same per-array xorshift32 generator as run.mjs, so the
 * output checksums (sum y, sum |y|) can be compared with the WebAssembly builds. Dimensions as in
 * run.mjs: d = dv = h = 64, rank = 8, L = n, a = the largest divisor of n <= sqrt(n), b = n / a;
 * mixture = softmax + dense1 with alpha 0.5, 0.5; fixed uses the default pattern.
 * Prints one JSON object per variant per line on stdout.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/c/attnlab.h"

static const struct { attn_variant v; const char *id; } VARIANTS[] = {
#define X(ENUM, id, label, family, dims, inputs, options, cost, summary, formula) { ENUM, id },
#include "../src/c/variants.def"
#undef X
};
#define NVARIANTS ((int)(sizeof VARIANTS / sizeof VARIANTS[0]))

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Array index i in ATTN_INPUT_LIST order: the seed formula is shared with run.mjs. */
static float *random_array(size_t count, int index, int n) {
    float *x = aligned_alloc(64, ((count * sizeof(float)) + 63) / 64 * 64);
    if (!x) return NULL;
    uint32_t s = (uint32_t)(index + 1) * 2654435761u + (uint32_t)n * 40503u;
    s |= 1u;
    for (size_t i = 0; i < count; i++) {
        s ^= s << 13; s ^= s >> 17; s ^= s << 5;
        x[i] = (float)(s >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
    }
    return x;
}

static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s N VARIANTS MIN_TIME_MS MIN_REPS WARM_MS\n", argv[0]);
        return 2;
    }
    const int n = atoi(argv[1]);
    const double min_time = atof(argv[3]);
    const int min_reps = atoi(argv[4]);
    const double warm_ms = atof(argv[5]);
    const int d = 64, dv = 64, h = 64, rank = 8, L = n;
    int a = 1;
    for (int t = 1; (long)t * t <= n; t++) if (n % t == 0) a = t;
    const int b = n / a;
    attn_dims dims = { .n = n, .d = d, .dv = dv, .h = h, .L = L, .a = a, .b = b, .rank = rank };

    /* Shapes in ATTN_INPUT_LIST order: q k v x w1 b1 w2 b2 w r wa ba wb bb r1 r2 */
    const size_t counts[16] = {
        (size_t)n * d, (size_t)n * d, (size_t)n * dv, (size_t)n * d,
        (size_t)d * h, (size_t)h, (size_t)h * L, (size_t)L,
        (size_t)d * L, (size_t)L * L, (size_t)d * a, (size_t)a,
        (size_t)d * b, (size_t)b, (size_t)L * rank, (size_t)L * rank,
    };
    float *arrays[16] = { 0 };
    size_t input_bytes[16] = { 0 };

    char *list = strdup(argv[2]);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int vi = -1;
        for (int i = 0; i < NVARIANTS; i++) if (strcmp(VARIANTS[i].id, tok) == 0) vi = i;
        if (vi < 0) { printf("{\"variant\":\"%s\",\"n\":%d,\"error\":\"unknown variant\"}\n", tok, n); fflush(stdout); continue; }
        const attn_variant var = VARIANTS[vi].v;

        attn_options opt;
        attn_options_default(&opt);
        if (var == ATTN_MIXTURE) {
            opt.n_components = 2;
            opt.component[0] = ATTN_SOFTMAX; opt.component[1] = ATTN_DENSE1;
            opt.alpha[0] = 0.5f; opt.alpha[1] = 0.5f;
        }
        /* Which arrays the variant reads (mixture: softmax's and dense1's). */
        int need[16] = { 0 };
        need[2] = 1; /* v */
        switch (var) {
        case ATTN_SOFTMAX: case ATTN_LINEAR: case ATTN_EFFICIENT: case ATTN_TAYLOR: need[0] = need[1] = 1; break;
        case ATTN_DENSE: need[3] = need[4] = need[5] = need[6] = need[7] = 1; break;
        case ATTN_DENSE1: need[3] = need[8] = 1; break;
        case ATTN_RANDOM: need[9] = 1; break;
        case ATTN_FACTORIZED_DENSE: need[3] = need[10] = need[11] = need[12] = need[13] = 1; break;
        case ATTN_FACTORIZED_RANDOM: need[14] = need[15] = 1; break;
        case ATTN_MIXTURE: need[0] = need[1] = need[3] = need[8] = 1; break;
        default: break;
        }
        size_t in_bytes = 0;
        int failed = 0;
        for (int i = 0; i < 16; i++) {
            if (!need[i]) continue;
            if (!arrays[i]) { arrays[i] = random_array(counts[i], i, n); input_bytes[i] = counts[i] * 4; }
            if (!arrays[i]) failed = 1;
            in_bytes += input_bytes[i];
        }
        attn_inputs in = {
            .q = arrays[0], .k = arrays[1], .v = arrays[2], .x = arrays[3], .w1 = arrays[4], .b1 = arrays[5],
            .w2 = arrays[6], .b2 = arrays[7], .w = arrays[8], .r = arrays[9], .wa = arrays[10], .ba = arrays[11],
            .wb = arrays[12], .bb = arrays[13], .r1 = arrays[14], .r2 = arrays[15],
        };
        size_t ws_bytes = 0;
        const char *detail = "";
        attn_status st = attn_workspace_size(var, &dims, &opt, 0, &ws_bytes);
        if (st != ATTN_OK || failed) {
            printf("{\"variant\":\"%s\",\"n\":%d,\"error\":\"%s\"}\n", tok, n, failed ? "out of memory" : attn_status_string(st));
            fflush(stdout);
            continue;
        }
        void *ws = aligned_alloc(64, (ws_bytes + 63) / 64 * 64 + 64);
        float *out = aligned_alloc(64, ((size_t)n * dv * 4 + 63) / 64 * 64);
        if (!ws || !out) { printf("{\"variant\":\"%s\",\"n\":%d,\"error\":\"out of memory\"}\n", tok, n); free(ws); free(out); continue; }

        /* warm-up: at least one call, more while under warm_ms; none when warm_ms < 0 (huge n) */
        double last = -1;
        if (warm_ms >= 0) {
            double t0 = now_ms();
            do {
                double t = now_ms();
                st = attn_run(var, &dims, &in, &opt, out, NULL, ws, ws_bytes, &detail);
                last = now_ms() - t;
                if (st != ATTN_OK) break;
            } while (now_ms() - t0 < warm_ms && last < warm_ms / 4);
        } else {
            st = attn_check(var, &dims, &opt, &detail);
        }
        if (st != ATTN_OK) {
            printf("{\"variant\":\"%s\",\"n\":%d,\"error\":\"%s: %s\"}\n", tok, n, attn_status_string(st), detail ? detail : "");
            free(ws); free(out); fflush(stdout);
            continue;
        }
        /* repeats: the same policy as run.mjs (2-3 repeats when one call takes over 0.5 s) */
        const int max_reps = 1000;
        int reps_wanted = min_reps;
        double budget = min_time;
        int batch = 1;
        if (last >= 0 && last < 1.0) batch = (int)fmin(1000, ceil(1.0 / fmax(last, 1e-4)));
        double *samples = malloc(sizeof(double) * max_reps);
        double *cpu = malloc(sizeof(double) * max_reps);
        double cpu_total = 0, wall_total = 0;
        int reps = 0;
        double start = now_ms();
        for (;;) {
            double c = cpu_ms(), t = now_ms();
            for (int r = 0; r < batch; r++) attn_run(var, &dims, &in, &opt, out, NULL, ws, ws_bytes, &detail);
            double ms = (now_ms() - t) / batch;
            cpu[reps] = (cpu_ms() - c) / batch;
            cpu_total += cpu[reps];
            wall_total += ms;
            samples[reps++] = ms;
            if (reps == 1 && ms > 500) { reps_wanted = ms > 2000 ? 2 : 3; budget = 0; }
            double elapsed = now_ms() - start;
            if (reps >= max_reps || (reps >= reps_wanted && elapsed >= budget) || elapsed > 20000) break;
        }
        qsort(samples, reps, sizeof(double), cmp_double);
        qsort(cpu, reps, sizeof(double), cmp_double);
        double med = reps % 2 ? samples[reps / 2] : 0.5 * (samples[reps / 2 - 1] + samples[reps / 2]);
        double cpu_med = reps % 2 ? cpu[reps / 2] : 0.5 * (cpu[reps / 2 - 1] + cpu[reps / 2]);
        double q1 = samples[(reps - 1) / 4], q3 = samples[(3 * (reps - 1) + 3) / 4];
        double sum = 0, sumabs = 0;
        for (size_t i = 0; i < (size_t)n * dv; i++) { sum += out[i]; sumabs += fabs(out[i]); }
        printf("{\"variant\":\"%s\",\"n\":%d,\"median_ms\":%.6f,\"min_ms\":%.6f,\"max_ms\":%.6f,\"q1_ms\":%.6f,"
               "\"q3_ms\":%.6f,\"cpu_median_ms\":%.6f,\"cpu_wall_ratio\":%.4f,\"reps\":%d,\"batch\":%d,\"workspace_bytes\":%zu,\"bytes\":%zu,\"sum\":%.9g,\"sumabs\":%.9g}\n",
               tok, n, med, samples[0], samples[reps - 1], q1, q3, cpu_med, cpu_total / wall_total, reps, batch, ws_bytes,
               ws_bytes + in_bytes + (size_t)n * dv * 4, sum, sumabs);
        fflush(stdout);
        free(samples); free(cpu); free(ws); free(out);
    }
    for (int i = 0; i < 16; i++) free(arrays[i]);
    free(list);
    return 0;
}
