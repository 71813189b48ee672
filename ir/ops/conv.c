// SPDX-License-Identifier: Apache-2.0
// Window geometry (spatial.h) shared by Conv/ConvTranspose/pools, and shape
// inference for Conv and ConvTranspose.
#include <string.h>

#include "ir/ops/infer_impl.h"
#include "ir/ops/spatial.h"

typedef enum auto_pad_e { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } auto_pad_t;

static mlcc_status_t read_auto_pad(const mlcc_node_t* node, auto_pad_t* out) {
  *out = PAD_NOTSET;
  const char* s = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_string(node, "auto_pad", "NOTSET", &s));
  if (strcmp(s, "NOTSET") == 0) *out = PAD_NOTSET;
  else if (strcmp(s, "SAME_UPPER") == 0) *out = PAD_SAME_UPPER;
  else if (strcmp(s, "SAME_LOWER") == 0) *out = PAD_SAME_LOWER;
  else if (strcmp(s, "VALID") == 0) *out = PAD_VALID;
  else {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s attribute 'auto_pad' must be NOTSET, SAME_UPPER, SAME_LOWER "
                            "or VALID; got '%s'",
                            mlcc_infer_op(node), s);
  }
  return mlcc_ok_status();
}

// Reads an ints attribute of exactly |want| entries each >= |min| into
// |dst|; when absent, fills |dst| with |dflt|.
static mlcc_status_t read_ints(const mlcc_node_t* node, const char* name, uint32_t want,
                               int64_t min, int64_t dflt, int64_t* dst, bool* out_present) {
  const int64_t* v = NULL;
  uint32_t n = 0;
  if (out_present) *out_present = false;
  MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, name, &v, &n));
  if (v == NULL || n == 0) {
    for (uint32_t i = 0; i < want; ++i) dst[i] = dflt;
    return mlcc_ok_status();
  }
  if (n != want) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s attribute '%s' must have %u values (%s); got %u",
                            mlcc_infer_op(node), name, want,
                            strcmp(name, "pads") == 0 ? "begin and end per spatial dim"
                                                      : "one per spatial dim",
                            n);
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (v[i] < min) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s attribute '%s' values must be >= %lld; got %lld at index %u",
                              mlcc_infer_op(node), name, (long long)min, (long long)v[i], i);
    }
    dst[i] = v[i];
  }
  if (out_present) *out_present = true;
  return mlcc_ok_status();
}

// Output size of a forward window op along one dim (Conv and pools).
static mlcc_status_t forward_dim(const mlcc_node_t* node, mlcc_spatial_t* g, int32_t i,
                                 auto_pad_t pad, int64_t dk) {
  int64_t in = g->in[i], s = g->strides[i];
  if (pad == PAD_SAME_UPPER || pad == PAD_SAME_LOWER) {
    int64_t out = mlcc_ceil_div_nonneg(in, s);
    int64_t total = 0;
    MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "padding", out > 0 ? out - 1 : 0, s, &total));
    MLCC_RETURN_IF_ERROR(mlcc_infer_add(node, "padding", total, dk - in, &total));
    if (total < 0) total = 0;
    g->pad_begin[i] = pad == PAD_SAME_UPPER ? total / 2 : total - total / 2;
    g->pad_end[i] = total - g->pad_begin[i];
    g->out[i] = out;
    return mlcc_ok_status();
  }
  if (pad == PAD_VALID) g->pad_begin[i] = g->pad_end[i] = 0;
  int64_t padded = 0;
  MLCC_RETURN_IF_ERROR(mlcc_infer_add(node, "padded input", in, g->pad_begin[i], &padded));
  MLCC_RETURN_IF_ERROR(mlcc_infer_add(node, "padded input", padded, g->pad_end[i], &padded));
  if (padded < dk) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs the padded input to cover the dilated kernel; spatial "
                            "dim %d has input %lld + pads %lld+%lld = %lld but the kernel "
                            "spans (%lld-1)*%lld+1 = %lld",
                            mlcc_infer_op(node), (int)i, (long long)in,
                            (long long)g->pad_begin[i], (long long)g->pad_end[i],
                            (long long)padded, (long long)g->kernel[i],
                            (long long)g->dilations[i], (long long)dk);
  }
  int64_t span = padded - dk;
  int64_t out = span / s + 1;
  if (g->ceil_mode && pad == PAD_NOTSET && span % s != 0) {
    out += 1;
    // The last window must start inside the input or the left padding
    // (PyTorch and onnxruntime drop one that starts in the right padding).
    if ((out - 1) * s >= in + g->pad_begin[i]) out -= 1;
  }
  g->out[i] = out;
  return mlcc_ok_status();
}

// Output size and pads of ConvTranspose along one dim.
static mlcc_status_t transpose_dim(const mlcc_node_t* node, mlcc_spatial_t* g, int32_t i,
                                   auto_pad_t pad, int64_t dk, bool have_out_shape,
                                   int64_t out_shape) {
  int64_t in = g->in[i], s = g->strides[i];
  int64_t full = 0;  // stride*(in-1) + output_padding + dk
  MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "output size", s, in > 0 ? in - 1 : 0, &full));
  MLCC_RETURN_IF_ERROR(mlcc_infer_add(node, "output size", full, g->output_padding[i], &full));
  MLCC_RETURN_IF_ERROR(mlcc_infer_add(node, "output size", full, dk, &full));
  if (have_out_shape || pad == PAD_SAME_UPPER || pad == PAD_SAME_LOWER) {
    int64_t out = out_shape;
    if (!have_out_shape) MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "output size", in, s, &out));
    int64_t total = full - out;
    if (total < 0) total = 0;  // onnxruntime clamps; the tail is bias only
    g->pad_begin[i] = pad == PAD_SAME_UPPER ? total / 2 : total - total / 2;
    g->pad_end[i] = total - g->pad_begin[i];
    g->out[i] = out;
    return mlcc_ok_status();
  }
  if (pad == PAD_VALID) g->pad_begin[i] = g->pad_end[i] = 0;
  int64_t out = full - g->pad_begin[i] - g->pad_end[i];
  if (out < 0) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "ConvTranspose output dim %d would be negative: "
                            "%lld*(%lld-1) + output_padding %lld + kernel span %lld - pads "
                            "%lld-%lld = %lld",
                            (int)i, (long long)s, (long long)in,
                            (long long)g->output_padding[i], (long long)dk,
                            (long long)g->pad_begin[i], (long long)g->pad_end[i],
                            (long long)out);
  }
  g->out[i] = out;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_spatial_resolve(const mlcc_node_t* node, mlcc_spatial_t* out) {
  memset(out, 0, sizeof(*out));
  bool is_conv = node->op == MLCC_OP_CONV, is_convt = node->op == MLCC_OP_CONV_TRANSPOSE;
  bool is_max = node->op == MLCC_OP_MAX_POOL, is_avg = node->op == MLCC_OP_AVERAGE_POOL;
  bool is_lp = node->op == MLCC_OP_LP_POOL;
  if (!is_conv && !is_convt && !is_max && !is_avg && !is_lp) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "mlcc_spatial_resolve called on %s", mlcc_infer_op(node));
  }
  mlcc_spatial_t g;
  memset(&g, 0, sizeof(g));
  mlcc_value_t *x = NULL, *w = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 0, "X", true, &x));
  if (x->shape.rank < 3) {
    char sb[MLCC_INFER_SHAPE_BUF];
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs input X of rank >= 3 [N,C,D1,...]; got %s",
                            mlcc_infer_op(node), mlcc_infer_fmt_shape(&x->shape, sb));
  }
  int32_t n = x->shape.rank - 2;
  g.n_spatial = n;
  for (int32_t i = 0; i < n; ++i) g.in[i] = x->shape.dims[i + 2];
  int64_t c = x->shape.dims[1];
  g.group = 1;
  g.out_channels = c;

  if (is_conv || is_convt) {
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 1, "W", true, &w));
    MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", MLCC_INFER_DT_FLOAT));
    MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", w, "W"));
    char sx[MLCC_INFER_SHAPE_BUF], sw[MLCC_INFER_SHAPE_BUF];
    if (w->shape.rank != x->shape.rank) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s needs W of the same rank as X; got X%s and W%s",
                              mlcc_infer_op(node), mlcc_infer_fmt_shape(&x->shape, sx),
                              mlcc_infer_fmt_shape(&w->shape, sw));
    }
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "group", 1, &g.group));
    if (g.group < 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s attribute 'group' must be >= 1; got %lld",
                              mlcc_infer_op(node), (long long)g.group);
    }
    if (is_conv) {
      int64_t need = 0;
      MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "group * W.shape[1]", g.group,
                                          w->shape.dims[1], &need));
      if (c != need) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Conv needs input channels C == group * W.shape[1]; got "
                                "X%s (C=%lld), group=%lld and W%s",
                                mlcc_infer_fmt_shape(&x->shape, sx), (long long)c,
                                (long long)g.group, mlcc_infer_fmt_shape(&w->shape, sw));
      }
      if (w->shape.dims[0] % g.group != 0) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "Conv needs output channels W.shape[0]=%lld divisible by "
                                "group=%lld",
                                (long long)w->shape.dims[0], (long long)g.group);
      }
      g.out_channels = w->shape.dims[0];
    } else {
      if (c != w->shape.dims[0] || c % g.group != 0) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "ConvTranspose needs W.shape[0] == input channels C, "
                                "divisible by group; got X%s (C=%lld), W%s, group=%lld",
                                mlcc_infer_fmt_shape(&x->shape, sx), (long long)c,
                                mlcc_infer_fmt_shape(&w->shape, sw), (long long)g.group);
      }
      MLCC_RETURN_IF_ERROR(mlcc_infer_mul(node, "output channels", w->shape.dims[1],
                                          g.group, &g.out_channels));
    }
    mlcc_value_t* b = NULL;
    MLCC_RETURN_IF_ERROR(mlcc_infer_input(node, 2, "B", false, &b));
    if (b != NULL) {
      MLCC_RETURN_IF_ERROR(mlcc_infer_same_dtype(node, x, "X", b, "B"));
      if (b->shape.rank != 1 || b->shape.dims[0] != g.out_channels) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "%s needs bias B of shape [%lld] (one per output channel); "
                                "got %s",
                                mlcc_infer_op(node), (long long)g.out_channels,
                                mlcc_infer_fmt_shape(&b->shape, sx));
      }
    }
  } else {
    uint32_t allowed = MLCC_INFER_DT_FLOAT;
    if (is_max && node->opset >= 12) allowed |= MLCC_INFER_DT_SINT | MLCC_INFER_DT_UINT;
    MLCC_RETURN_IF_ERROR(mlcc_infer_check_dtype(node, x, "X", allowed));
    if (is_max && node->opset >= 12 && mlcc_dtype_is_int(x->dtype) &&
        mlcc_dtype_size(x->dtype) != 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "MaxPool input 'X' must be a float type, int8 or uint8; got %s",
                              mlcc_dtype_name(x->dtype));
    }
  }

  // kernel_shape: required for pools; for Conv it defaults to W's dims and,
  // when present, must agree with them.
  bool have_kernel = false;
  MLCC_RETURN_IF_ERROR(read_ints(node, "kernel_shape", (uint32_t)n, 1, 0, g.kernel,
                                 &have_kernel));
  if (is_conv || is_convt) {
    for (int32_t i = 0; i < n; ++i) {
      int64_t wk = w->shape.dims[i + 2];
      if (have_kernel && g.kernel[i] != wk) {
        char sw[MLCC_INFER_SHAPE_BUF];
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "%s attribute 'kernel_shape' must match W's spatial dims; "
                                "kernel_shape[%d]=%lld but W is %s",
                                mlcc_infer_op(node), (int)i, (long long)g.kernel[i],
                                mlcc_infer_fmt_shape(&w->shape, sw));
      }
      g.kernel[i] = wk;
    }
  } else if (!have_kernel) {
    return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                            "%s needs the attribute 'kernel_shape'; it is missing",
                            mlcc_infer_op(node));
  }
  MLCC_RETURN_IF_ERROR(read_ints(node, "strides", (uint32_t)n, 1, 1, g.strides, NULL));
  bool have_dil = false;
  MLCC_RETURN_IF_ERROR(read_ints(node, "dilations", (uint32_t)n, 1, 1, g.dilations, &have_dil));
  // MaxPool has 'dilations' from opset 10, LpPool from 18, AveragePool from 19.
  if (have_dil && ((is_avg && node->opset < 19) || (is_max && node->opset < 10) ||
                   (is_lp && node->opset < 18))) {
    for (int32_t i = 0; i < n; ++i) {
      if (g.dilations[i] != 1) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "%s at opset %d has no 'dilations' attribute; got "
                                "dilations[%d]=%lld",
                                mlcc_infer_op(node), (int)node->opset, (int)i,
                                (long long)g.dilations[i]);
      }
    }
  }
  int64_t pads[2 * MLCC_MAX_SPATIAL];
  MLCC_RETURN_IF_ERROR(read_ints(node, "pads", (uint32_t)(2 * n), 0, 0, pads, NULL));
  for (int32_t i = 0; i < n; ++i) {
    g.pad_begin[i] = pads[i];
    g.pad_end[i] = pads[i + n];
  }
  auto_pad_t pad = PAD_NOTSET;
  MLCC_RETURN_IF_ERROR(read_auto_pad(node, &pad));

  if (is_lp) {
    // LpPool-2..26: integer p (LpPool-1's float p is not implemented).
    int64_t p = 2;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "p", 2, &p));
    if (p < 1 || p > 64) {
      return mlcc_make_status(p < 1 ? MLCC_STATUS_INVALID_MODEL : MLCC_STATUS_UNIMPLEMENTED,
                              "LpPool attribute 'p' must be in [1, 64] here; got %lld",
                              (long long)p);
    }
  }
  if (is_max || is_avg || is_lp) {
    int64_t ceil_mode = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "ceil_mode", 0, &ceil_mode));
    if (ceil_mode != 0 && ceil_mode != 1) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s attribute 'ceil_mode' must be 0 or 1; got %lld",
                              mlcc_infer_op(node), (long long)ceil_mode);
    }
    if (ceil_mode && node->opset < (is_lp ? 18 : 10)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                              "%s has no 'ceil_mode' before opset %d; the node has opset %d",
                              mlcc_infer_op(node), is_lp ? 18 : 10, (int)node->opset);
    }
    g.ceil_mode = ceil_mode != 0;
    if (is_avg) {
      int64_t cip = 0;
      MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "count_include_pad", 0, &cip));
      g.count_include_pad = cip != 0;
    } else {
      int64_t storage_order = 0;
      MLCC_RETURN_IF_ERROR(mlcc_node_attr_int(node, "storage_order", 0, &storage_order));
      if (storage_order != 0 && storage_order != 1) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "MaxPool attribute 'storage_order' must be 0 or 1; got %lld",
                                (long long)storage_order);
      }
    }
  }

  bool have_out_shape = false;
  int64_t out_shape[MLCC_MAX_SPATIAL] = {0};
  if (is_convt) {
    MLCC_RETURN_IF_ERROR(
        read_ints(node, "output_padding", (uint32_t)n, 0, 0, g.output_padding, NULL));
    for (int32_t i = 0; i < n; ++i) {
      int64_t lim = g.strides[i] > g.dilations[i] ? g.strides[i] : g.dilations[i];
      if (g.output_padding[i] >= lim) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "ConvTranspose needs output_padding < stride or dilation; "
                                "got output_padding[%d]=%lld with stride %lld, dilation %lld",
                                (int)i, (long long)g.output_padding[i],
                                (long long)g.strides[i], (long long)g.dilations[i]);
      }
    }
    const int64_t* os = NULL;
    uint32_t n_os = 0;
    MLCC_RETURN_IF_ERROR(mlcc_node_attr_ints(node, "output_shape", &os, &n_os));
    if (n_os != 0) {
      // The spec gives only spatial dims; some exporters include N and C.
      if (n_os != (uint32_t)n && n_os != (uint32_t)n + 2) {
        return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                "ConvTranspose attribute 'output_shape' must have %d values "
                                "(one per spatial dim); got %u",
                                (int)n, n_os);
      }
      for (int32_t i = 0; i < n; ++i) {
        out_shape[i] = os[n_os - (uint32_t)n + (uint32_t)i];
        if (out_shape[i] < 0) {
          return mlcc_make_status(MLCC_STATUS_INVALID_MODEL,
                                  "ConvTranspose attribute 'output_shape' values must be >= "
                                  "0; got %lld",
                                  (long long)out_shape[i]);
        }
      }
      have_out_shape = true;
    }
  }

  for (int32_t i = 0; i < n; ++i) {
    int64_t dk = 0;
    MLCC_RETURN_IF_ERROR(
        mlcc_infer_mul(node, "dilated kernel", g.kernel[i] - 1, g.dilations[i], &dk));
    MLCC_RETURN_IF_ERROR(mlcc_infer_add(node, "dilated kernel", dk, 1, &dk));
    if (is_convt) {
      MLCC_RETURN_IF_ERROR(transpose_dim(node, &g, i, pad, dk, have_out_shape, out_shape[i]));
    } else {
      MLCC_RETURN_IF_ERROR(forward_dim(node, &g, i, pad, dk));
    }
  }
  *out = g;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_spatial_resolve_as(const mlcc_node_t* node, mlcc_op_t op, int32_t opset,
                                      const mlcc_value_t* x, const mlcc_value_t* w,
                                      mlcc_spatial_t* out) {
  mlcc_value_t fx = *x, fw;
  fx.dtype = MLCC_DTYPE_F32;
  mlcc_value_t* ins[2] = {&fx, NULL};
  if (w != NULL) {
    fw = *w;
    fw.dtype = MLCC_DTYPE_F32;
    ins[1] = &fw;
  }
  mlcc_node_t proxy = *node;
  proxy.op = op;
  if (opset > 0) proxy.opset = opset;
  proxy.inputs = ins;
  proxy.n_inputs = w != NULL ? 2 : 1;
  proxy.n_outputs = 0;
  proxy.outputs = NULL;
  return mlcc_spatial_resolve(&proxy, out);
}

void mlcc_spatial_to3(const mlcc_spatial_t* g, int64_t in[3], int64_t out[3], int64_t kernel[3],
                      int64_t strides[3], int64_t dilations[3], int64_t pad_begin[3],
                      int64_t pad_end[3]) {
  for (int32_t j = 0; j < 3; ++j) {
    int32_t i = j - (3 - g->n_spatial);  // g's dim, < 0 for a padded one
    bool real = i >= 0;
    in[j] = real ? g->in[i] : 1;
    out[j] = real ? g->out[i] : 1;
    kernel[j] = real ? g->kernel[i] : 1;
    strides[j] = real ? g->strides[i] : 1;
    dilations[j] = real ? g->dilations[i] : 1;
    pad_begin[j] = real ? g->pad_begin[i] : 0;
    if (pad_end != NULL) pad_end[j] = real ? g->pad_end[i] : 0;
  }
}

// Sets output |out_index| to [N, out_channels, out spatial...] (infer_impl.h).
mlcc_status_t mlcc_infer_set_window_output(mlcc_node_t* node, const mlcc_spatial_t* g,
                                       uint32_t out_index, mlcc_dtype_t dtype) {
  const mlcc_value_t* x = node->inputs[0];
  mlcc_shape_t y;
  memset(&y, 0, sizeof(y));
  y.rank = g->n_spatial + 2;
  y.dims[0] = x->shape.dims[0];
  y.dims[1] = g->out_channels;
  for (int32_t i = 0; i < g->n_spatial; ++i) y.dims[i + 2] = g->out[i];
  return mlcc_infer_set_output(node, out_index, dtype, &y);
}

// Conv: Y[N, M, out...] with W[M, C/group, k...]; see mlcc_spatial_resolve.
mlcc_status_t mlcc_infer_conv(mlcc_node_t* node) {
  mlcc_spatial_t g;
  MLCC_RETURN_IF_ERROR(mlcc_spatial_resolve(node, &g));
  return mlcc_infer_set_window_output(node, &g, 0, node->inputs[0]->dtype);
}

// ConvTranspose: Y[N, W[1]*group, out...]; see mlcc_spatial_resolve.
mlcc_status_t mlcc_infer_conv_transpose(mlcc_node_t* node) {
  mlcc_spatial_t g;
  MLCC_RETURN_IF_ERROR(mlcc_spatial_resolve(node, &g));
  return mlcc_infer_set_window_output(node, &g, 0, node->inputs[0]->dtype);
}
