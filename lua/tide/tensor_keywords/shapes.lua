-- PyTorch's keyword names of the shape ops, joins, splits, diagonals and index ops
-- (tide.tensor_keywords): tide.cat(xs, {dim = 2}), x:unsqueeze({dim = 1}), x:transpose({dim0 = 1,
-- dim1 = 2}), x:gather({dim = 2, index = i}), x:scatter(2, i, {value = 0}), tide.tril(x,
-- {diagonal = 1}). Where PyTorch has two names for one place (split's split_size and
-- torch.split's split_size_or_sections, tensor_split's sections / indices, scatter's src /
-- value, concatenate's dim / axis) the second name is an alias put in that place.
local raise = require("tide.autograd.raise")

-- the signature of op: params as PyTorch orders them, `aliases` (name -> its place in params)
-- PyTorch's other names of a parameter, `options` the names tide's function reads itself from
-- a trailing table, `adapt(f, first, p1, ..., pn, rest)` a call in tide's positional form
local function sig(op, params, t)
    t = t or {}
    local s = { params = params, methods = t.methods, functions = t.functions,
        options = t.options, call = t.adapt }
    for name, i in pairs(t.aliases or {}) do
        s.aliases = s.aliases or {}
        s.aliases[name] = params[i]
    end
    return s
end

-- gather's sparse_grad: PyTorch's sparse gradient layout, which tide does not have; false is
-- the default (accepted and dropped), true raises
local function gather_call(f, x, dim, index, rest)
    local sparse = rest and rest.sparse_grad
    if sparse ~= nil and type(sparse) ~= "boolean" then
        raise(("tide: gather: sparse_grad must be true or false, got %s"):format(type(sparse)))
    elseif sparse then
        raise("tide: gather: sparse_grad = true is not supported (tide's gradients are dense); " ..
            "leave it out or pass false")
    end
    return f(x, dim, index)
end

-- repeat_interleave: tide's function form tide.repeat_interleave(repeats_tensor, {output_size =})
-- takes the options right after the tensor, with no placeholders
local function repeat_interleave_call(f, x, repeats, dim, rest)
    if rest == nil then
        return f(x, repeats, dim)
    elseif repeats == nil and dim == nil then
        return f(x, rest)
    end
    return f(x, repeats, dim, rest)
end

local S = {
    -- joins (tide.X only)
    cat = sig("cat", { "dim" }, { methods = false }),
    concat = sig("concat", { "dim" }, { methods = false }),
    concatenate = sig("concatenate", { "dim" }, { methods = false, aliases = { axis = 1 } }),
    stack = sig("stack", { "dim" }, { methods = false }),

    -- splits
    split = sig("split", { "split_size", "dim" }, { aliases = { split_size_or_sections = 1 } }),
    split_with_sizes = sig("split_with_sizes", { "split_sizes", "dim" }),
    unsafe_split = sig("unsafe_split", { "split_size", "dim" }),
    chunk = sig("chunk", { "chunks", "dim" }),
    unsafe_chunk = sig("unsafe_chunk", { "chunks", "dim" }),
    unbind = sig("unbind", { "dim" }),
    tensor_split = sig("tensor_split", { "sections", "dim" },
        { aliases = { indices = 1, tensor_indices_or_sections = 1 } }),
    hsplit = sig("hsplit", { "sections" }, { aliases = { indices = 1 } }),
    vsplit = sig("vsplit", { "sections" }, { aliases = { indices = 1 } }),
    dsplit = sig("dsplit", { "sections" }, { aliases = { indices = 1 } }),

    -- views and reshapes
    squeeze = sig("squeeze", { "dim" }),
    squeeze_ = sig("squeeze_", { "dim" }, { functions = false }),
    unsqueeze = sig("unsqueeze", { "dim" }),
    unsqueeze_ = sig("unsqueeze_", { "dim" }, { functions = false }),
    flatten = sig("flatten", { "start_dim", "end_dim" }),
    unflatten = sig("unflatten", { "dim", "sizes" }),
    transpose = sig("transpose", { "dim0", "dim1" }),
    transpose_ = sig("transpose_", { "dim0", "dim1" }, { functions = false }),
    swapdims = sig("swapdims", { "dim0", "dim1" }),
    swapdims_ = sig("swapdims_", { "dim0", "dim1" }, { functions = false }),
    swapaxes = sig("swapaxes", { "axis0", "axis1" }),
    swapaxes_ = sig("swapaxes_", { "axis0", "axis1" }, { functions = false }),
    movedim = sig("movedim", { "source", "destination" }),
    moveaxis = sig("moveaxis", { "source", "destination" }),
    narrow = sig("narrow", { "dim", "start", "length" }),
    narrow_copy = sig("narrow_copy", { "dim", "start", "length" }),
    select = sig("select", { "dim", "index" }),
    permute = sig("permute", { "dims" }),
    broadcast_to = sig("broadcast_to", { "size" }),
    sum_to_size = sig("sum_to_size", { "size" }, { functions = false }),
    unfold = sig("unfold", { "dimension", "size", "step" }, { functions = false }),

    -- reorderings
    roll = sig("roll", { "shifts", "dims" }),
    flip = sig("flip", { "dims" }),
    combinations = sig("combinations", { "r" },
        { methods = false, options = { "with_replacement" } }),
    rot90 = sig("rot90", { "k", "dims" }),
    diff = sig("diff", { "n", "dim" }, { options = { "prepend", "append" } }),
    repeat_interleave = sig("repeat_interleave", { "repeats", "dim" },
        { options = { "output_size" }, adapt = repeat_interleave_call }),

    -- triangles and diagonals
    tril = sig("tril", { "diagonal" }),
    tril_ = sig("tril_", { "diagonal" }, { functions = false }),
    triu = sig("triu", { "diagonal" }),
    triu_ = sig("triu_", { "diagonal" }, { functions = false }),
    diagonal = sig("diagonal", { "offset", "dim1", "dim2" }),
    diag = sig("diag", { "diagonal" }),
    diag_embed = sig("diag_embed", { "offset", "dim1", "dim2" }),
    diagflat = sig("diagflat", { "offset" }),

    -- gathers, scatters and index ops
    gather = sig("gather", { "dim", "index" },
        { options = { "sparse_grad" }, adapt = gather_call }),
    take_along_dim = sig("take_along_dim", { "indices", "dim" }),
    index_select = sig("index_select", { "dim", "index" }),
    scatter = sig("scatter", { "dim", "index", "src" },
        { aliases = { value = 3 }, options = { "reduce" } }),
    scatter_ = sig("scatter_", { "dim", "index", "src" },
        { aliases = { value = 3 }, options = { "reduce" }, functions = false }),
    scatter_add = sig("scatter_add", { "dim", "index", "src" }),
    scatter_add_ = sig("scatter_add_", { "dim", "index", "src" }, { functions = false }),
    scatter_reduce = sig("scatter_reduce", { "dim", "index", "src", "reduce" },
        { options = { "include_self" } }),
    scatter_reduce_ = sig("scatter_reduce_", { "dim", "index", "src", "reduce" },
        { options = { "include_self" }, functions = false }),
    index_add = sig("index_add", { "dim", "index", "source" }, { options = { "alpha" } }),
    index_add_ = sig("index_add_", { "dim", "index", "source" },
        { options = { "alpha" }, functions = false }),
    index_copy = sig("index_copy", { "dim", "index", "source" }),
    index_copy_ = sig("index_copy_", { "dim", "index", "source" }, { functions = false }),
    index_fill = sig("index_fill", { "dim", "index", "value" }),
    index_fill_ = sig("index_fill_", { "dim", "index", "value" }, { functions = false }),
    masked_fill = sig("masked_fill", { "mask", "value" }),
    masked_fill_ = sig("masked_fill_", { "mask", "value" }, { functions = false }),
    index_reduce = sig("index_reduce", { "dim", "index", "source", "reduce" },
        { options = { "include_self" } }),
    index_reduce_ = sig("index_reduce_", { "dim", "index", "source", "reduce" },
        { options = { "include_self" }, functions = false }),
    slice_scatter = sig("slice_scatter", { "src" },
        { options = { "dim", "start", "end", "step" } }),
    select_scatter = sig("select_scatter", { "src", "dim", "index" }),
    diagonal_scatter = sig("diagonal_scatter", { "src", "offset", "dim1", "dim2" }),
}

return S
