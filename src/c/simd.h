/* simd.h — the thin SIMD layer every kernel is written against.
 *
 * vf is four float lanes. With -msimd128 it is a WebAssembly v128; with -mrelaxed-simd as well,
 * vf_madd is a fused multiply-add (f32x4.relaxed_madd). Natively on x86-64 it is an SSE __m128
 * (FMA with -mfma or -march=native). Otherwise (the scalar WebAssembly build) it is a struct of
 * four floats, so a kernel keeps the same register blocking and summation order in every build
 * and only the instructions change.
 * Kernels handle the last (count % 4) elements with plain scalar code.
 */
#ifndef ATTN_SIMD_H
#define ATTN_SIMD_H

#include <stdint.h>

#define VW 4 /* lanes in a vf */
#if defined(__wasm_relaxed_simd__) || (defined(__FMA__) && defined(__SSE2__) && !defined(__wasm__) && !defined(ATTN_PORTABLE))
#define ATTN_FMA 1 /* vf_madd is fused */
#else
#define ATTN_FMA 0
#endif

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define ATTN_SIMD 1

typedef v128_t vf;
static inline vf vf_load(const float *p) { return wasm_v128_load(p); }
static inline void vf_store(float *p, vf a) { wasm_v128_store(p, a); }
static inline vf vf_splat(float x) { return wasm_f32x4_splat(x); }
/* One load that fills every lane (a broadcast load on x86, no shuffle port). */
static inline vf vf_load_splat(const float *p) { return wasm_v128_load32_splat(p); }
static inline vf vf_zero(void) { return wasm_f32x4_splat(0.0f); }
static inline vf vf_add(vf a, vf b) { return wasm_f32x4_add(a, b); }
static inline vf vf_sub(vf a, vf b) { return wasm_f32x4_sub(a, b); }
static inline vf vf_mul(vf a, vf b) { return wasm_f32x4_mul(a, b); }
static inline vf vf_div(vf a, vf b) { return wasm_f32x4_div(a, b); }
/* pmax/pmin: one instruction each on x86 (maxps/minps). With a NaN they return a, so a NaN input
 * of vf_exp stays NaN, and vf_exp(NaN) = NaN carries a NaN logit into the output, where the
 * binding reports it. */
static inline vf vf_max(vf a, vf b) { return wasm_f32x4_pmax(a, b); }
static inline vf vf_min(vf a, vf b) { return wasm_f32x4_pmin(a, b); }
#if defined(__wasm_relaxed_simd__)
/* a*b + c, fused. */
static inline vf vf_madd(vf a, vf b, vf c) { return wasm_f32x4_relaxed_madd(a, b, c); }
#else
static inline vf vf_madd(vf a, vf b, vf c) { return wasm_f32x4_add(wasm_f32x4_mul(a, b), c); }
#endif
static inline float vf_hsum(vf a) {
    /* (l0 + l2) + (l1 + l3): the fixed reduction order every build uses. */
    return (wasm_f32x4_extract_lane(a, 0) + wasm_f32x4_extract_lane(a, 2)) +
           (wasm_f32x4_extract_lane(a, 1) + wasm_f32x4_extract_lane(a, 3));
}
static inline float vf_hmax(vf a) {
    float x = wasm_f32x4_extract_lane(a, 0), y = wasm_f32x4_extract_lane(a, 1);
    float z = wasm_f32x4_extract_lane(a, 2), w = wasm_f32x4_extract_lane(a, 3);
    x = x > z ? x : z;
    y = y > w ? y : w;
    return x > y ? x : y;
}
/* Lanes where a > 0 take t, the others f. */
static inline vf vf_select_gt0(vf a, vf t, vf f) {
    return wasm_v128_bitselect(t, f, wasm_f32x4_gt(a, vf_zero()));
}
/* t = y + 1.5*2^23 holds round(y) in its low mantissa bits (|y| < 2^22); returns 2^round(y),
 * built in the exponent bits: no float-to-int conversion, which engines expand to many steps. */
static inline vf vf_pow2_of_shifted(vf t) {
    return wasm_i32x4_shl(wasm_i32x4_add(t, wasm_i32x4_splat(127 - 0x4B400000)), 23);
}
/* Lanes where x < t become +0, the others (NaN included) keep v. */
static inline vf vf_zero_below(vf x, vf t, vf v) { return wasm_v128_andnot(v, wasm_f32x4_lt(x, t)); }
/* Four rows of a 4 x 4 block become its four columns: eight shuffles (unpcklps/unpckhps and
 * movlhps/movhlps on x86), no memory round trip. */
static inline void vf_transpose4(vf *r0, vf *r1, vf *r2, vf *r3) {
    vf t0 = wasm_i32x4_shuffle(*r0, *r1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(*r0, *r1, 2, 6, 3, 7);
    vf t2 = wasm_i32x4_shuffle(*r2, *r3, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(*r2, *r3, 2, 6, 3, 7);
    *r0 = wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5), *r1 = wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7);
    *r2 = wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5), *r3 = wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7);
}

#elif defined(__SSE2__) && !defined(ATTN_PORTABLE)
/* Native x86-64 (the sanitizer test, the benchmark's -O3 -march=native reference): SSE2, and FMA
 * where the compiler may use it. ATTN_PORTABLE forces the four-float struct below. */
#include <immintrin.h>
#define ATTN_SIMD 1

typedef __m128 vf;
static inline vf vf_load(const float *p) { return _mm_loadu_ps(p); }
static inline void vf_store(float *p, vf a) { _mm_storeu_ps(p, a); }
static inline vf vf_splat(float x) { return _mm_set1_ps(x); }
static inline vf vf_load_splat(const float *p) { return _mm_set1_ps(*p); }
static inline vf vf_zero(void) { return _mm_setzero_ps(); }
static inline vf vf_add(vf a, vf b) { return _mm_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm_div_ps(a, b); }
/* Operands swapped so that, like wasm's pmax/pmin, a NaN in b returns a and one in a returns a. */
static inline vf vf_max(vf a, vf b) { return _mm_max_ps(b, a); }
static inline vf vf_min(vf a, vf b) { return _mm_min_ps(b, a); }
#if defined(__FMA__)
static inline vf vf_madd(vf a, vf b, vf c) { return _mm_fmadd_ps(a, b, c); }
#else
static inline vf vf_madd(vf a, vf b, vf c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
#endif
static inline float vf_lane(vf a, int i) {
    float l[4];
    _mm_storeu_ps(l, a);
    return l[i];
}
static inline float vf_hsum(vf a) { return (vf_lane(a, 0) + vf_lane(a, 2)) + (vf_lane(a, 1) + vf_lane(a, 3)); }
static inline float vf_hmax(vf a) {
    float x = vf_lane(a, 0) > vf_lane(a, 2) ? vf_lane(a, 0) : vf_lane(a, 2);
    float y = vf_lane(a, 1) > vf_lane(a, 3) ? vf_lane(a, 1) : vf_lane(a, 3);
    return x > y ? x : y;
}
static inline vf vf_select_gt0(vf a, vf t, vf f) {
    vf m = _mm_cmpgt_ps(a, _mm_setzero_ps());
    return _mm_or_ps(_mm_and_ps(m, t), _mm_andnot_ps(m, f));
}
static inline vf vf_pow2_of_shifted(vf t) {
    __m128i e = _mm_add_epi32(_mm_castps_si128(t), _mm_set1_epi32(127 - 0x4B400000));
    return _mm_castsi128_ps(_mm_slli_epi32(e, 23));
}
static inline vf vf_zero_below(vf x, vf t, vf v) { return _mm_andnot_ps(_mm_cmplt_ps(x, t), v); }
static inline void vf_transpose4(vf *r0, vf *r1, vf *r2, vf *r3) { _MM_TRANSPOSE4_PS(*r0, *r1, *r2, *r3); }

#else /* scalar: four plain floats */
#define ATTN_SIMD 0

typedef struct vf { float l[4]; } vf;
#define VF_MAP2(expr)                  \
    vf r;                              \
    for (int i_ = 0; i_ < 4; i_++) {   \
        r.l[i_] = (expr);              \
    }                                  \
    return r
static inline vf vf_load(const float *p) { VF_MAP2(p[i_]); }
static inline void vf_store(float *p, vf a) {
    for (int i = 0; i < 4; i++) p[i] = a.l[i];
}
static inline vf vf_splat(float x) { VF_MAP2(x); }
static inline vf vf_load_splat(const float *p) { VF_MAP2(*p); }
static inline vf vf_zero(void) { VF_MAP2(0.0f); }
static inline vf vf_add(vf a, vf b) { VF_MAP2(a.l[i_] + b.l[i_]); }
static inline vf vf_sub(vf a, vf b) { VF_MAP2(a.l[i_] - b.l[i_]); }
static inline vf vf_mul(vf a, vf b) { VF_MAP2(a.l[i_] * b.l[i_]); }
static inline vf vf_div(vf a, vf b) { VF_MAP2(a.l[i_] / b.l[i_]); }
static inline vf vf_max(vf a, vf b) { VF_MAP2(a.l[i_] < b.l[i_] ? b.l[i_] : a.l[i_]); }
static inline vf vf_min(vf a, vf b) { VF_MAP2(b.l[i_] < a.l[i_] ? b.l[i_] : a.l[i_]); }
static inline vf vf_madd(vf a, vf b, vf c) { VF_MAP2(a.l[i_] * b.l[i_] + c.l[i_]); }
static inline float vf_hsum(vf a) { return (a.l[0] + a.l[2]) + (a.l[1] + a.l[3]); }
static inline float vf_hmax(vf a) {
    float x = a.l[0] > a.l[2] ? a.l[0] : a.l[2];
    float y = a.l[1] > a.l[3] ? a.l[1] : a.l[3];
    return x > y ? x : y;
}
static inline vf vf_select_gt0(vf a, vf t, vf f) { VF_MAP2(a.l[i_] > 0.0f ? t.l[i_] : f.l[i_]); }
static inline vf vf_pow2_of_shifted(vf t) {
    vf r;
    for (int i = 0; i < 4; i++) {
        union { uint32_t u; float f; } bits;
        bits.f = t.l[i];
        bits.u = (bits.u + (uint32_t)(127 - 0x4B400000)) << 23;
        r.l[i] = bits.f;
    }
    return r;
}
static inline vf vf_zero_below(vf x, vf t, vf v) { VF_MAP2(x.l[i_] < t.l[i_] ? 0.0f : v.l[i_]); }
static inline void vf_transpose4(vf *r0, vf *r1, vf *r2, vf *r3) {
    vf *r[4] = {r0, r1, r2, r3};
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) {
            float t = r[i]->l[j];
            r[i]->l[j] = r[j]->l[i];
            r[j]->l[i] = t;
        }
}
#undef VF_MAP2
#endif

/* vf_exp's polynomial at x, x_in clamped to [-87.3, 88.3], the lanes where x_in < -87.3 then set to
 * exactly 0 (whatever x gave them: the andnot clears every bit, NaN and inf included). */
static inline vf vf_exp_at(vf x, vf x_in) {
    const vf shifter = vf_splat(12582912.0f); /* 1.5 * 2^23: adding it rounds to an integer */
    vf t = vf_add(vf_mul(x, vf_splat(1.44269504088896341f)), shifter);
    vf k = vf_sub(t, shifter);
    vf r = vf_sub(x, vf_mul(k, vf_splat(0.693359375f)));
    r = vf_sub(r, vf_mul(k, vf_splat(-2.12194440e-4f)));
    /* P(r) = p5 + p4 r + ... + p0 r^5 as three independent pairs combined in powers of r^2
     * (Estrin's scheme): half the dependency chain of Horner's rule, and exp is latency-bound
     * in the softmax loops. */
    vf r2 = vf_mul(r, r);
    vf lo = vf_madd(vf_splat(1.6666665459e-1f), r, vf_splat(5.0000001201e-1f));
    vf mid = vf_madd(vf_splat(8.3334519073e-3f), r, vf_splat(4.1665795894e-2f));
    vf hi = vf_madd(vf_splat(1.9875691500e-4f), r, vf_splat(1.3981999507e-3f));
    vf p = vf_madd(vf_madd(hi, r2, mid), r2, lo);
    p = vf_madd(p, r2, vf_add(r, vf_splat(1.0f)));
    return vf_zero_below(x_in, vf_splat(-87.3f), vf_mul(p, vf_pow2_of_shifted(t)));
}

/* exp(x) for every lane: Cephes' expf polynomial after reduction by ln 2, relative error about
 * 2e-7 on [-87, 88]. Below -87.3 (including -inf, a masked logit) the result is exactly 0; NaN
 * gives NaN. */
static inline vf vf_exp(vf x_in) { return vf_exp_at(vf_min(vf_max(x_in, vf_splat(-87.3f)), vf_splat(88.3f)), x_in); }

/* vf_exp of lanes known to be <= 0 (or NaN): the same bits without the clamps, two of its thirty
 * operations. In [-87.3, 0] the clamps return x itself; below it the lane is cleared either way. */
static inline vf vf_exp_nonpositive(vf x) { return vf_exp_at(x, x); }

/* The scalar tail of vf_exp: the same polynomial, one lane. */
static inline float attn_expf(float x) {
    float r[4] = {x, x, x, x};
    vf e = vf_exp(vf_load(r));
    vf_store(r, e);
    return r[0];
}

#endif /* ATTN_SIMD_H */
