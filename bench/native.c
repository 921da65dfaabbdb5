/* native.c — times the attnlab C core compiled natively (gcc -O3 -march=native), as a reference
 * for the WebAssembly builds (not a competitor). Built and run by bench/native.mjs:
 *
 *   native SEED DIMS VARIANT[,VARIANT...] MIN_TIME_MS MIN_REPS WARM_MS [COMPONENTS]
 *
 *   DIMS        name=value pairs of attnlab.h's ATTN_DIM_LIST, comma-separated: n=1024,d=64,...
 *   WARM_MS     < 0: no warm-up (huge n)
 *   COMPONENTS  for a variant that takes `components` (mixture): id:alpha pairs, softmax:0.5,dense1:0.5
 *
 * What each variant reads comes from the registry (attn_inputs_of: variants.def's inputs column,
 * typed): which arrays to allocate and their shapes; a composite variant (the mixture) reads its
 * components'.
 * Array `name` holds uniform numbers in [-1, 1) from stream (SEED, name), the generator of
 * src/js/prng.js (uniformArray), so the output checksums (sum y, sum |y|) can be compared with the
 * WebAssembly builds. Prints one JSON object per variant per line on stdout.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/c/internal.h" /* the registry: attn_variant_id, attn_inputs_of, attn_is_composite */

/* ---- the registry (internal.h's tables of variants.def) ---- */

static const char *const INPUT_NAMES[] = {
#define INPUT_NAME(name, ...) #name,
    ATTN_INPUT_LIST(INPUT_NAME)
#undef INPUT_NAME
};
#define NINPUTS ((int)(sizeof INPUT_NAMES / sizeof INPUT_NAMES[0]))

static const struct { const char *name; size_t offset; } DIMS[] = {
#define DIM_ENTRY(name, ...) { #name, offsetof(attn_dims, name) },
    ATTN_DIM_LIST(DIM_ENTRY)
#undef DIM_ENTRY
};
#define NDIMS ((int)(sizeof DIMS / sizeof DIMS[0]))

static int32_t *dim_field(attn_dims *dims, const char *name, size_t len) {
    for (int i = 0; i < NDIMS; i++)
        if (strlen(DIMS[i].name) == len && strncmp(DIMS[i].name, name, len) == 0)
            return (int32_t *)((char *)dims + DIMS[i].offset);
    return NULL;
}

/* The variant whose id is id[0..len), or -1. */
static int find_variant(const char *id, size_t len) {
    for (int v = 0; v < ATTN_VARIANT_COUNT; v++)
        if (strlen(attn_variant_id((attn_variant)v)) == len && strncmp(attn_variant_id((attn_variant)v), id, len) == 0)
            return v;
    return -1;
}

/* Adds the arrays variant v reads (its inputs column) to counts[] (elements per array). */
static void add_inputs(attn_variant v, const attn_dims *dims, size_t counts[]) {
    input_list list = attn_inputs_of(v);
    for (int i = 0; i < list.count; i++)
        counts[list.at[i].input] = (size_t)attn_dim(dims, list.at[i].rows) * (size_t)attn_dim(dims, list.at[i].cols);
}

/* ---- inputs: src/js/prng.js's uniformArray(count, seed, name) ---- */

static uint32_t stream_seed(uint32_t seed, const char *name) {
    uint32_t h = 0x811c9dc5u; /* FNV-1a */
    for (const char *c = name; *c; c++) { h ^= (unsigned char)*c; h *= 0x01000193u; }
    return h ^ (seed * 0x9e3779b1u);
}

static float *uniform_array(size_t count, uint32_t seed, const char *name) {
    float *x = aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64);
    if (!x) return NULL;
    uint32_t a = stream_seed(seed, name);
    for (size_t i = 0; i < count; i++) { /* mulberry32 */
        a += 0x6d2b79f5u;
        uint32_t t = a;
        t = (t ^ (t >> 15)) * (t | 1u);
        t ^= t + (t ^ (t >> 7)) * (t | 61u);
        double u = (double)(t ^ (t >> 14)) / 4294967296.0;
        x[i] = (float)(2.0 * u - 1.0);
    }
    return x;
}

/* ---- timing ---- */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
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

typedef struct { double min_time, warm_ms; int min_reps; } policy;

typedef struct {
    attn_variant v;
    const attn_dims *dims;
    const attn_inputs *in;
    const attn_options *opt;
    float *out;
    void *ws;
    size_t ws_bytes;
} call;

static attn_status run(const call *c, const char **detail) {
    return attn_run(c->v, c->dims, c->in, c->opt, c->out, NULL, c->ws, c->ws_bytes, detail);
}

/* Warm-up: at least one call, more while under warm_ms; none when warm_ms < 0 (huge n). Sets
 * *last to the last call's time (-1 without warm-up). */
static attn_status warm_up(const call *c, double warm_ms, double *last, const char **detail) {
    *last = -1;
    if (warm_ms < 0) return attn_check(c->v, c->dims, c->opt, detail);
    attn_status st;
    double t0 = now_ms();
    do {
        double t = now_ms();
        st = run(c, detail);
        *last = now_ms() - t;
        if (st != ATTN_OK) break;
    } while (now_ms() - t0 < warm_ms && *last < warm_ms / 4);
    return st;
}

/* Repeats with the policy of bench/measure.mjs (2-3 repeats when one call takes over 0.5 s) and
 * prints the statistics as the fields of a JSON object. */
static void repeat_and_print(const call *c, const policy *p, double last) {
    enum { MAX_REPS = 1000 };
    static double samples[MAX_REPS], cpu[MAX_REPS];
    const char *detail = "";
    int reps_wanted = p->min_reps, reps = 0, batch = 1;
    double budget = p->min_time, cpu_total = 0, wall_total = 0;
    if (last >= 0 && last < 1.0) batch = (int)fmin(1000, ceil(1.0 / fmax(last, 1e-4)));
    double start = now_ms();
    for (;;) {
        double c0 = cpu_ms(), t = now_ms();
        for (int r = 0; r < batch; r++) run(c, &detail);
        double ms = (now_ms() - t) / batch;
        cpu[reps] = (cpu_ms() - c0) / batch;
        cpu_total += cpu[reps];
        wall_total += ms;
        samples[reps++] = ms;
        if (reps == 1 && ms > 500) { reps_wanted = ms > 2000 ? 2 : 3; budget = 0; }
        double elapsed = now_ms() - start;
        if (reps >= MAX_REPS || (reps >= reps_wanted && elapsed >= budget) || elapsed > 20000) break;
    }
    qsort(samples, reps, sizeof(double), cmp_double);
    qsort(cpu, reps, sizeof(double), cmp_double);
    double med = reps % 2 ? samples[reps / 2] : 0.5 * (samples[reps / 2 - 1] + samples[reps / 2]);
    double cpu_med = reps % 2 ? cpu[reps / 2] : 0.5 * (cpu[reps / 2 - 1] + cpu[reps / 2]);
    printf("\"median_ms\":%.6f,\"min_ms\":%.6f,\"max_ms\":%.6f,\"q1_ms\":%.6f,\"q3_ms\":%.6f,\"cpu_median_ms\":%.6f,"
           "\"cpu_wall_ratio\":%.4f,\"reps\":%d,\"batch\":%d,",
           med, samples[0], samples[reps - 1], samples[(reps - 1) / 4], samples[(3 * (reps - 1) + 3) / 4], cpu_med,
           cpu_total / wall_total, reps, batch);
}

/* ---- one variant ---- */

typedef struct {
    uint32_t seed;
    attn_dims dims;
    const char *components; /* id:alpha,... */
    float *arrays[NINPUTS];
    size_t bytes[NINPUTS];
} state;

/* Sets the mixture options from "id:alpha,id:alpha" and adds the components' inputs to counts. */
static int set_components(state *s, attn_options *opt, size_t counts[]) {
    const char *p = s->components;
    opt->n_components = 0;
    while (p && *p && opt->n_components < ATTN_MAX_COMPONENTS) {
        size_t len = strcspn(p, ":,");
        int c = find_variant(p, len);
        if (c < 0 || p[len] != ':') return -1;
        add_inputs((attn_variant)c, &s->dims, counts);
        opt->component[opt->n_components] = (int32_t)c;
        opt->alpha[opt->n_components++] = strtof(p + len + 1, NULL);
        p += strcspn(p, ",");
        if (*p == ',') p++;
    }
    return opt->n_components ? 0 : -1;
}

#undef FAIL /* internal.h's: a status return; here a JSON error line */
#define FAIL(...) do { printf(__VA_ARGS__); printf("\"}\n"); fflush(stdout); return; } while (0)

static void bench_variant(state *s, attn_variant var, const policy *p) {
    attn_options opt;
    attn_options_default(&opt);
    size_t counts[NINPUTS] = { 0 }, in_bytes = 0;
    printf("{\"variant\":\"%s\",\"n\":%d,", attn_variant_id(var), s->dims.n);
    if (attn_is_composite(var)) {
        if (set_components(s, &opt, counts)) FAIL("\"error\":\"cannot read the components of %s", attn_variant_id(var));
    } else {
        add_inputs(var, &s->dims, counts);
    }
    const float *ptr[NINPUTS] = { 0 };
    for (int i = 0; i < NINPUTS; i++) {
        if (!counts[i]) continue;
        if (!s->arrays[i]) { s->arrays[i] = uniform_array(counts[i], s->seed, INPUT_NAMES[i]); s->bytes[i] = counts[i] * 4; }
        if (!s->arrays[i]) FAIL("\"error\":\"out of memory");
        ptr[i] = s->arrays[i];
        in_bytes += s->bytes[i];
    }
    attn_inputs in;
    int k = 0;
#define SET_INPUT(name, ...) in.name = ptr[k++];
    ATTN_INPUT_LIST(SET_INPUT)
#undef SET_INPUT
    call c = { var, &s->dims, &in, &opt, NULL, NULL, 0 };
    const char *detail = "";
    attn_status st = attn_workspace_size(var, &s->dims, &opt, 0, &c.ws_bytes);
    if (st != ATTN_OK) FAIL("\"error\":\"%s", attn_status_string(st));
    size_t out_bytes = (size_t)s->dims.n * s->dims.dv * 4;
    c.ws = aligned_alloc(64, (c.ws_bytes + 63) / 64 * 64 + 64);
    c.out = aligned_alloc(64, (out_bytes + 63) / 64 * 64);
    double last = -1;
    if (!c.ws || !c.out) st = ATTN_ERR_MEMORY, detail = "out of memory";
    else st = warm_up(&c, p->warm_ms, &last, &detail);
    if (st == ATTN_OK) {
        repeat_and_print(&c, p, last);
        double sum = 0, sumabs = 0;
        for (size_t i = 0; i < out_bytes / 4; i++) { sum += c.out[i]; sumabs += fabs(c.out[i]); }
        printf("\"workspace_bytes\":%zu,\"bytes\":%zu,\"sum\":%.9g,\"sumabs\":%.9g}\n", c.ws_bytes, c.ws_bytes + in_bytes + out_bytes, sum, sumabs);
    } else {
        printf("\"error\":\"%s: %s\"}\n", attn_status_string(st), detail ? detail : "");
    }
    fflush(stdout);
    free(c.ws); free(c.out);
}

/* Reads "n=1024,d=64,..." into dims. */
static int parse_dims(const char *text, attn_dims *dims) {
    memset(dims, 0, sizeof *dims);
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "=");
        int32_t *f = dim_field(dims, p, len);
        if (!f || !p[len]) return -1;
        *f = (int32_t)atoi(p + len + 1);
        p += strcspn(p, ",");
        if (*p == ',') p++;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s SEED DIMS VARIANTS MIN_TIME_MS MIN_REPS WARM_MS [COMPONENTS]\n", argv[0]);
        return 2;
    }
    static state s;
    s.seed = (uint32_t)strtoul(argv[1], NULL, 10);
    s.components = argc > 7 ? argv[7] : NULL;
    if (parse_dims(argv[2], &s.dims)) { fprintf(stderr, "native: bad DIMS %s\n", argv[2]); return 2; }
    const policy p = { atof(argv[4]), atof(argv[6]), atoi(argv[5]) };
    for (const char *tok = argv[3]; *tok;) {
        size_t len = strcspn(tok, ",");
        int var = find_variant(tok, len);
        if (var >= 0) bench_variant(&s, (attn_variant)var, &p);
        else { printf("{\"variant\":\"%.*s\",\"n\":%d,\"error\":\"unknown variant\"}\n", (int)len, tok, s.dims.n); fflush(stdout); }
        tok += len + (tok[len] == ',');
    }
    for (int i = 0; i < NINPUTS; i++) free(s.arrays[i]);
    return 0;
}
