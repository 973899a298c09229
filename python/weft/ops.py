"""weft's operators (the C++ weft::ops layer) on NumPy arrays and torch tensors: GEMM forward with
fused bias and ReLU, the MLP, convolution forward, and their backward passes, in float32 and
bfloat16 (torch.bfloat16, or uint16 bit patterns with dtype='bf16'); the GEMM operators (gemm,
mlp and their backward passes) in float64 too.

Conventions, as torch.nn.functional: a GEMM is a linear layer, y = x @ w.T + b with x (N, K),
w (M, K), b (M,) and y (N, M); a convolution takes NCHW activations and KCRS filters.

    y = weft.ops.gemm(x, w, b, relu=True)                  # prepared once, cached, then run
    op = weft.ops.Gemm(M=256, N=64, K=512, bias=True)      # the prepared operator itself
    y = op(x, w, b)
    op.source, op.description                              # 'tuned (exact hit)' or 'default', ...
    y = weft.ops.conv2d(x, w, b, stride=1, padding=1, relu=True)

Arrays are plain (row-major, converted into weft's blocked layouts and back on every call, except
the activations a GEMM pass reads or writes in place: op.operands marks them "plain") or,
with layout="blocked", flat arrays already in the operator's blocked layouts (op.to_blocked /
op.from_blocked convert; op.blocked_size(name) says how many elements), for callers who keep
tensors blocked between calls. Prepared operators are kept per (descriptor, configuration,
threads): cache_info() counts builds and hits. See docs/python.md.
"""
import threading

from . import _arrays, _weft

__all__ = ["Gemm", "GemmBackwardData", "GemmBackwardWeights", "Conv2d", "Conv2dBackwardData",
           "Conv2dBackwardWeights", "gemm", "mlp", "gemm_backward_data", "gemm_backward_weights", "conv2d",
           "conv2d_backward_data", "conv2d_backward_weights", "cache_info", "clear_cache"]

_MAX_CACHED = 64
_cache = {}
_stats = {"builds": 0, "hits": 0}
_lock = threading.Lock()


def cache_info():
    """{'builds': operators prepared (kernels generated), 'hits': calls served by a cached one, 'size': kept}."""
    with _lock:
        return dict(_stats, size=len(_cache))


def clear_cache():
    """Forgets the prepared operators (the library's kernel caches keep their kernels)."""
    with _lock:
        _cache.clear()


def _frozen(value):
    if isinstance(value, dict):
        return tuple(sorted((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    return value


def _config_of(config):
    """'auto', 'default', a dict, or what weft.tune returned (its .config)."""
    return getattr(config, "config", config)


def _threads(threads):
    """The team a prepared operator is for (a part of its cache key): threads=, checked, or weft's."""
    if threads is None:
        return _weft.get_num_threads()
    if not isinstance(threads, int) or isinstance(threads, bool):
        raise TypeError(f"argument 'threads' must be an int, not {type(threads).__name__}")
    return threads


def _prepared(key, prepare):
    with _lock:
        op = _cache.get(key)
        if op is not None:
            _stats["hits"] += 1
            return op
    op = prepare()  # outside the lock: preparing releases the GIL and may take a while
    with _lock:
        if len(_cache) >= _MAX_CACHED:
            _cache.pop(next(iter(_cache)))  # the oldest
        _cache.setdefault(key, op)
        _stats["builds"] += 1
        return _cache[key]


def _weft_dtype(dtype, f64_offered):
    """f64_offered: the GEMM operators compute in float64 too, the convolutions do not."""
    names = {"float32": "f32", "f32": "f32", "bfloat16": "bf16", "bf16": "bf16", "float64": "f64", "f64": "f64"}
    if dtype not in names:
        raise ValueError(f"argument 'dtype': {dtype!r} is none of 'f32', 'bf16'" + (", 'f64'" if f64_offered else ""))
    if names[dtype] == "f64" and not f64_offered:
        raise TypeError("argument 'dtype': weft.ops' convolutions compute in float32 and bfloat16, not float64 "
                        "(the GEMM operators take float64)")
    return names[dtype]


class _Operator:
    """A prepared weft::ops operator: operands named as its call's arguments, plain or blocked."""

    def __init__(self, key, prepare):
        self._op = _prepared(key, prepare)
        self._operands = self._op.operands

    source = property(lambda self: self._op.source,
                      doc="'explicit', 'default', 'tuned (exact hit)' or 'tuned (nearest tuned shape)'")
    description = property(lambda self: self._op.description, doc="the configuration in one line")
    config_keys = property(lambda self: list(self._op.config_keys),
                           doc="the keys config= takes for this operator: loop_string, blocks and its knobs")
    dtype = property(lambda self: self._op.dtype)
    threads = property(lambda self: self._op.threads)
    writes_f32_output = property(lambda self: self._op.writes_f32_output,
                                 doc="whether a bf16 operator's blocked out= may be float32 (GemmBackwardWeights)")
    writes_f32_column_major = property(lambda self: self._op.writes_f32_column_major,
                                       doc="whether that float32 out= may also be in column-major tiles "
                                           "(GemmBackwardWeights' dw_order='column_major')")
    operands = property(lambda self: self._operands,
                        doc="per operand: name, plain shape, blocked_size, output, plain (the blocked "
                            "layout is the plain one: used in place)")

    def _operand(self, name):
        for operand in self._operands:
            if operand["name"] == name:
                return operand
        names = ", ".join(o["name"] for o in self._operands)
        raise ValueError(f"argument 'name': the operator has no operand {name!r} (it has {names})")

    def blocked_size(self, name):
        """Elements of operand `name`'s blocked copy (tile padding and image rims included)."""
        return self._operand(name)["blocked_size"]

    def plain_shape(self, name):
        """Operand `name`'s plain shape (a tuple)."""
        return tuple(self._operand(name)["shape"])

    def to_blocked(self, name, plain, out=None, relu_of=None):
        """The plain array of operand `name` in the operator's blocked layout (a flat array).

        relu_of: for a gradient through a ReLU, the ReLU's output (plain, the shape of `plain`):
        the elements where it is <= 0 are converted as +0 (it passes > 0 and NaN), the ReLU's
        backward fused into the conversion (activations only)."""
        if out is None:
            out = _arrays.empty_like_kind(plain, (self.blocked_size(name),), self.dtype)
        if relu_of is None:
            self._op.to_blocked(name, plain, out)
        else:
            self._op.to_blocked_relu_backward(name, plain, relu_of, out)
        return out

    def channel_sums(self, name, blocked, out=None):
        """Sums of activation `name`'s blocked copy over the batch and pixels, one per feature or
        channel (its plain shape's second dimension), float32 (float64 for an f64 operator): the
        bias gradient from a blocked output gradient."""
        shape = self.plain_shape(name)
        if len(shape) < 2:
            # A bias has no channel dimension to size out by; the message is the operator's own,
            # which refuses a weight so.
            raise ValueError(f"operand {name!r} is no activation (a bias)")
        if out is None:
            out = _arrays.empty_like_kind(blocked, (shape[1],), "f64" if self.dtype == "f64" else "f32")
        self._op.channel_sums(name, blocked, out)
        return out

    def from_blocked(self, name, blocked, out=None):
        """The blocked array of operand `name` back in its plain shape."""
        if out is None:
            out = _arrays.empty_like_kind(blocked, self._operand(name)["shape"], self.dtype)
        self._op.from_blocked(name, blocked, out)
        return out

    def _call(self, arrays, out, layout, column_major=False):
        output = next(o for o in self._operands if o["output"])
        if layout == "plain":
            if out is None:
                out = _arrays.empty_like_kind(arrays[0], output["shape"], self.dtype)
            self._op.run_plain(arrays, out)
        elif layout == "blocked":
            if out is None:
                out = _arrays.empty_like_kind(arrays[0], (output["blocked_size"],), self.dtype)
            self._op.run_blocked(list(arrays) + [out], column_major)
        else:
            raise ValueError(f"argument 'layout': {layout!r} is none of 'plain', 'blocked'")
        return out


class Gemm(_Operator):
    """y (N, M) = relu?(x (N, K) @ w (M, K).T + b (M,)); layers > 1: an MLP of that many such
    layers (M == K), each with its own w and b. dtype: 'f32', 'bf16' or 'f64'. config: 'auto' (the tuning database, else the
    machine's default; .source says which), 'default', or a dict {'loop_string': ..., 'bm': ...,
    'bn': ..., 'bk': ..., 'kbf': ..., 'blocks': [...]} as weft.tune.gemm returns."""

    def __init__(self, M, N, K, dtype="f32", bias=False, relu=False, layers=1, config="auto", threads=None):
        config, threads, dtype = _config_of(config), _threads(threads), _weft_dtype(dtype, True)
        key = ("gemm_fwd", M, N, K, dtype, layers, bool(bias), bool(relu), _frozen(config), threads)
        super().__init__(key, lambda: _weft.prepare_gemm("fwd", M, N, K, dtype, layers, bool(bias), bool(relu),
                                                          config, threads))
        self.layers, self.bias = layers, bool(bias)

    def __call__(self, x, w, b=None, out=None, layout="plain"):
        """w and b: one array each, or (layers > 1) a sequence of one per layer."""
        weights = list(w) if self.layers > 1 else [w]
        if self.layers > 1 and len(weights) != self.layers:
            raise ValueError(f"argument 'w' must hold {self.layers} weights, one per layer, got {len(weights)}")
        arrays = [x] + weights
        if self.bias:
            if b is None:
                raise ValueError("argument 'b' is needed: the operator was prepared with bias=True")
            biases = list(b) if self.layers > 1 else [b]
            if len(biases) != self.layers:
                raise ValueError(f"argument 'b' must hold {self.layers} biases, one per layer, got {len(biases)}")
            arrays += biases
        elif b is not None:
            raise ValueError("argument 'b' is given, but the operator was prepared with bias=False")
        return self._call(arrays, out, layout)


class _GemmBackward(_Operator):
    def __init__(self, pass_name, M, N, K, dtype, config, threads, plain_dy=True):
        config, threads, dtype = _config_of(config), _threads(threads), _weft_dtype(dtype, True)
        super().__init__(("gemm_" + pass_name, M, N, K, dtype, _frozen(config), threads, bool(plain_dy)),
                         lambda: _weft.prepare_gemm(pass_name, M, N, K, dtype, 1, False, False, config, threads,
                                                    bool(plain_dy)))


class GemmBackwardData(_GemmBackward):
    """dx (N, K) = dy (N, M) @ w (M, K): the input's gradient of Gemm.

    dy and dx are used in place where the pass can (op.operands' "plain"); plain_dy=False keeps
    dy in the blocked layout, e.g. to share one blocked dy with a GemmBackwardWeights that
    cannot read it plain."""

    def __init__(self, M, N, K, dtype="f32", config="auto", threads=None, plain_dy=True):
        super().__init__("bwd", M, N, K, dtype, config, threads, plain_dy)

    def __call__(self, dy, w, out=None, layout="plain"):
        return self._call([dy, w], out, layout)


class GemmBackwardWeights(_GemmBackward):
    """dw (M, K) = dy (N, M).T @ x (N, K): the weights' gradient of Gemm.

    In bf16 with layout="blocked", out may be a float32 array of op.blocked_size("dw") elements:
    the gradient unrounded, each element where the bf16 copy would hold it (dw_order="vnni2": fp32
    master weights kept in the bf16 weights' layout, as weft.torch does), or with
    dw_order="column_major" in the column-major tiles of the f32 operator with these tiles (each
    tile's column pairs apart: fp32 weights kept in that layout, weft.torch under autocast)."""

    def __init__(self, M, N, K, dtype="f32", config="auto", threads=None):
        super().__init__("upd", M, N, K, dtype, config, threads)

    def __call__(self, dy, x, out=None, layout="plain", dw_order="vnni2"):
        if dw_order not in ("vnni2", "column_major"):
            raise ValueError(f"argument 'dw_order': {dw_order!r} is none of 'vnni2', 'column_major'")
        if dw_order == "column_major" and layout != "blocked":
            raise ValueError("argument 'dw_order': 'column_major' is an order of the blocked dw: give layout='blocked'")
        return self._call([dy, x], out, layout, dw_order == "column_major")


def _pair(value, name):
    """An int or a pair of ints as an (h, w) pair: TypeError for another kind, ValueError for ints
    of another count."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value, value
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
        if len(value) == 2:
            return tuple(value)
        raise ValueError(f"argument '{name}' must be an int or a pair of ints, got {value!r}")
    raise TypeError(f"argument '{name}' must be an int or a pair of ints, got {value!r}")


class _ConvOperator(_Operator):
    def __init__(self, pass_name, N, C, H, W, K, R, S, stride, padding, dtype, bias, relu, config, threads,
                 dy_rim=(0, 0)):
        (stride_h, stride_w), (pad_h, pad_w) = _pair(stride, "stride"), _pair(padding, "padding")
        sizes = [N, H, W, C, K, R, S, stride_h, stride_w, pad_h, pad_w]
        dy_rim = _pair(dy_rim, "dy_rim")
        config, threads, dtype = _config_of(config), _threads(threads), _weft_dtype(dtype, False)
        key = ("conv_" + pass_name, tuple(sizes), dtype, bool(bias), bool(relu), _frozen(config), threads, dy_rim)
        super().__init__(key, lambda: _weft.prepare_conv(pass_name, sizes, dtype, bool(bias), bool(relu), config,
                                                          threads, list(dy_rim)))
        self.bias = bool(bias)


class Conv2d(_ConvOperator):
    """y (N, K, P, Q) = relu?(conv2d(x (N, C, H, W), w (K, C, R, S)) + b (K,)), with stride and
    zero padding (an int or a (h, w) pair), as torch.nn.functional.conv2d. config: 'auto',
    'default', or a dict {'loop_string': ..., 'bc': ..., 'bk': ..., ...} as weft.tune.conv2d returns."""

    def __init__(self, N, C, H, W, K, R, S, stride=1, padding=0, dtype="f32", bias=False, relu=False, config="auto",
                 threads=None):
        super().__init__("fwd", N, C, H, W, K, R, S, stride, padding, dtype, bias, relu, config, threads)

    def __call__(self, x, w, b=None, out=None, layout="plain"):
        if self.bias and b is None:
            raise ValueError("argument 'b' is needed: the operator was prepared with bias=True")
        if not self.bias and b is not None:
            raise ValueError("argument 'b' is given, but the operator was prepared with bias=False")
        return self._call([x, w] + ([b] if self.bias else []), out, layout)


class Conv2dBackwardData(_ConvOperator):
    """dx (N, C, H, W) from dy (N, K, P, Q) and w (K, C, R, S): the input's gradient of Conv2d."""

    def __init__(self, N, C, H, W, K, R, S, stride=1, padding=0, dtype="f32", config="auto", threads=None):
        super().__init__("bwd", N, C, H, W, K, R, S, stride, padding, dtype, False, False, config, threads)

    def __call__(self, dy, w, out=None, layout="plain"):
        return self._call([dy, w], out, layout)


class Conv2dBackwardWeights(_ConvOperator):
    """dw (K, C, R, S) from dy (N, K, P, Q) and x (N, C, H, W): the filter's gradient of Conv2d.

    dy_rim: the (h, w) rims around each image of the blocked dy it reads (an int or a pair; default
    none). Given Conv2dBackwardData's (its operands' "rim" of "dy"), one blocked dy serves both
    backward passes."""

    def __init__(self, N, C, H, W, K, R, S, stride=1, padding=0, dtype="f32", config="auto", threads=None,
                 dy_rim=0):
        super().__init__("upd", N, C, H, W, K, R, S, stride, padding, dtype, False, False, config, threads,
                         dy_rim)

    def __call__(self, dy, x, out=None, layout="plain"):
        return self._call([dy, x], out, layout)


def _shape(array, name, rank, meaning):
    shape = _arrays.shape_of(array, name)
    if len(shape) != rank:
        raise ValueError(f"argument '{name}' must be {meaning}, got shape {shape}")
    return shape


def _kind(array, name, dtype, f64_offered):
    """The weft dtype of `array` (argument `name`); f64_offered: the GEMM operators take float64."""
    kind = _arrays.dtype_name(array, name, dtype)
    if kind == "f64" and not f64_offered:
        raise TypeError(f"argument '{name}' is float64: weft.ops' convolutions compute in float32 and bfloat16 "
                        "(the GEMM operators take float64); convert it, e.g. x.astype(numpy.float32)")
    return kind


def gemm(x, w, b=None, relu=False, out=None, config="auto", dtype=None, threads=None):
    """y = relu?(x @ w.T + b): x (N, K), w (M, K), b (M,) or None -> y (N, M), through a cached Gemm."""
    N, K = _shape(x, "x", 2, "(N, K)")
    M = _shape(w, "w", 2, "(M, K)")[0]
    op = Gemm(M, N, K, _kind(x, "x", dtype, True), bias=b is not None, relu=relu, config=config, threads=threads)
    return op(x, w, b, out=out)


def mlp(x, weights, biases=None, relu=True, out=None, config="auto", dtype=None, threads=None):
    """The layers y = relu?(y @ w_l.T + b_l) in turn from y = x: x (N, K), each w_l (K, K), b_l (K,);
    one fused MLP pass of weft (the hidden activations never leave the blocked layout)."""
    N, K = _shape(x, "x", 2, "(N, K)")
    weights = list(weights)
    if not weights:
        raise ValueError("argument 'weights' holds no layer")
    if biases is not None:
        biases = list(biases)
        if len(biases) != len(weights):
            raise ValueError(f"argument 'biases' must hold one bias per weight ({len(weights)}) or be None, "
                             f"got {len(biases)}")
    op = Gemm(K, N, K, _kind(x, "x", dtype, True), bias=biases is not None, relu=relu, layers=len(weights), config=config,
              threads=threads)
    if len(weights) == 1:
        return op(x, weights[0], None if biases is None else biases[0], out=out)
    return op(x, weights, biases, out=out)


def gemm_backward_data(dy, w, out=None, config="auto", dtype=None, threads=None):
    """dx = dy @ w: dy (N, M), w (M, K) -> dx (N, K), the gradient of gemm's x."""
    N, M = _shape(dy, "dy", 2, "(N, M)")
    K = _shape(w, "w", 2, "(M, K)")[1]
    return GemmBackwardData(M, N, K, _kind(dy, "dy", dtype, True), config, threads)(dy, w, out=out)


def gemm_backward_weights(dy, x, out=None, config="auto", dtype=None, threads=None):
    """dw = dy.T @ x: dy (N, M), x (N, K) -> dw (M, K), the gradient of gemm's w."""
    N, M = _shape(dy, "dy", 2, "(N, M)")
    K = _shape(x, "x", 2, "(N, K)")[1]
    return GemmBackwardWeights(M, N, K, _kind(dy, "dy", dtype, True), config, threads)(dy, x, out=out)


def conv2d(x, w, b=None, stride=1, padding=0, relu=False, out=None, config="auto", dtype=None, threads=None):
    """y = relu?(conv2d(x, w) + b): x (N, C, H, W), w (K, C, R, S), b (K,) or None, as
    torch.nn.functional.conv2d(x, w, b, stride, padding), through a cached Conv2d."""
    N, C, H, W = _shape(x, "x", 4, "(N, C, H, W)")
    K, _, R, S = _shape(w, "w", 4, "(K, C, R, S)")
    op = Conv2d(N, C, H, W, K, R, S, stride, padding, _kind(x, "x", dtype, False), bias=b is not None, relu=relu,
                config=config, threads=threads)
    return op(x, w, b, out=out)


def conv2d_backward_data(dy, w, input_shape, stride=1, padding=0, out=None, config="auto", dtype=None, threads=None):
    """dx (input_shape: N, C, H, W) from dy (N, K, P, Q) and w (K, C, R, S), as
    torch.nn.grad.conv2d_input(input_shape, w, dy, stride, padding)."""
    K, _, R, S = _shape(w, "w", 4, "(K, C, R, S)")
    N, C, H, W = _shape_tuple(input_shape, "input_shape")
    return _conv_backward(Conv2dBackwardData, dy, w, (N, C, H, W, K, R, S), stride, padding, out, config, dtype, threads)


def conv2d_backward_weights(dy, x, weight_shape, stride=1, padding=0, out=None, config="auto", dtype=None,
                            threads=None):
    """dw (weight_shape: K, C, R, S) from dy (N, K, P, Q) and x (N, C, H, W), as
    torch.nn.grad.conv2d_weight(x, weight_shape, dy, stride, padding)."""
    N, C, H, W = _shape(x, "x", 4, "(N, C, H, W)")
    K, _, R, S = _shape_tuple(weight_shape, "weight_shape")
    return _conv_backward(Conv2dBackwardWeights, dy, x, (N, C, H, W, K, R, S), stride, padding, out, config, dtype, threads)


def _conv_backward(operator, dy, other, sizes, stride, padding, out, config, dtype, threads):
    _shape(dy, "dy", 4, "(N, K, P, Q)")
    op = operator(*sizes, stride, padding, _kind(dy, "dy", dtype, False), config, threads)
    return op(dy, other, out=out)


def _shape_tuple(shape, name):
    try:
        values = tuple(int(v) for v in shape)
    except TypeError:
        raise TypeError(f"argument '{name}' must be a sequence of 4 ints, got {shape!r}") from None
    if len(values) != 4:
        raise ValueError(f"argument '{name}' must hold 4 sizes, got {values}")
    return values
