/* linear_backward.c — the linear family's gradients, a switch over its forms: the kernelised form
 * in linear_kernel_backward.c, efficient attention in efficient_backward.c. Each keeps O(F*dv)
 * state: a forward sweep, then a reverse sweep of the prefix sums when causal.
 */
#include "internal.h"

void attn_linear_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                          const attn_options *opt, const float *dout, float *out, int exact_y,
                          const attn_grads *grads, arena *ws) {
    switch (attn_linear_kind(v)) {
    case LINEAR_KIND_KERNEL:
        attn_kernel_backward(v, dims, in, opt, dout, out, grads, ws);
        break;
    case LINEAR_KIND_EFFICIENT:
        if (opt->causal)
            attn_efficient_causal_backward(dims, in, dout, out, grads, ws);
        else
            attn_efficient_full_backward(dims, in, dout, out, grads, ws);
        break;
    case LINEAR_KIND_COUNT: return;
    }
    /* Split over threads, the causal backward groups its state sums in blocks of its own, and the
     * forward pass (linear.c) in others, so the y it recomputes on the way differs from
     * attention()'s in the last bits. The output is the forward pass's own instead (a second
     * forward, about a quarter of the call): attentionGrad's output is attention()'s bits on every
     * thread count, and the gradients stay those of the backward's own y (within the bar). Its
     * workspace is carved after the backward's, measured alike. */
    int threads = imin(arena_threads(ws), ATTN_MAX_THREADS), pool = attn_thread_count();
    if (exact_y && opt->causal && threads > 1 &&
        (arena_measuring(ws) || (pool > 1 && pool <= threads && dims->n > BT)))
        attn_linear_family(v, dims, in, opt, out, 0, ws);
}
