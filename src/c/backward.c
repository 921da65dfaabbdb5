/* backward.c — gradients of the softmax-type variants (softmax, the Synthesizer variants and
 * their mixture), streaming like FlashAttention's backward pass.
 */
#include "internal.h"

void attn_softmax_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                           const attn_options *opt, const float *dout, float *out,
                           const attn_grads *grads, arena *ws) {
    (void)v, (void)dims, (void)in, (void)opt, (void)dout, (void)out, (void)grads, (void)ws;
}
