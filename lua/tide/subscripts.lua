-- tide.subscripts: t[key] and t[key] = v for the keys other than an integer and a name (the
-- binding's __index and __newindex take those, and call these for a tensor or a table key):
--   t[mask]   mask a bool tensor shaped as t's first k dims: the elements (k = t:dim()) or the
--             slices where it is true, {count, rest...}, as PyTorch's x[mask]; a uint8 mask
--             (PyTorch's deprecated byte mask: nonzero is true) too, with PyTorch's warning
--   t[idx]    idx an int64 or int32 tensor of 1-based indices into dim 1 (negative from the
--             end): {idx.shape..., rest...}, as PyTorch's x[idx]
--   t[{...}]  Torch7's index, an entry per leading dim: a number selects (the dim goes), {a, b}
--             narrows to a..b (inclusive, negative from the end), {a, b, step} keeps every
--             step-th of those (step >= 1, PyTorch's a-1:b:step), {a} to a..a, {} keeps the dim
--             whole, and index tensors pick along their dims as PyTorch's advanced indexing
--             (several broadcast together: q[{rows, actions}]); dims past the list stay whole.
--             Without an index tensor the result is a view of t. One "..." stands for as
--             many {} as the other entries leave dims (PyTorch's t[..., -1]: t[{"...", -1}]).
-- t[key] = v writes the indexed elements in place: a number fills them, a tensor is broadcast to
-- their shape (an index repeated in idx takes one of its values, as in PyTorch). Everything is
-- checked before the write. Autograd records the ops these are written with.
-- x:index_put_(indices, values[, accumulate]) and index_put, PyTorch's, are written here too.
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local same_device = require("tide._same_device")

local is_tensor, shape_str, as_op = core.is_tensor, args.shape_str, args.as_op
local compat = require("tide._compat")
local unpack, is_integer = compat.unpack, compat.is_integer

local M = {}

local INDEX_DTYPES = { int64 = true, int32 = true }

local function describe(v)
    if type(v) == "number" then
        return tostring(v)
    end
    return is_tensor(v) and ("a %s tensor"):format(v.dtype) or type(v)
end

-- a uint8 key is PyTorch's deprecated byte mask: its nonzero elements are true, with PyTorch's
-- warning (once); any other key is returned as it is
local function byte_mask(key)
    if is_tensor(key) and key.dtype == "uint8" then
        require("tide._warn").once("uint8_index", "indexing with dtype uint8 is now " ..
            "deprecated, please use a dtype bool instead")
        return key:ne(0)
    end
    return key
end

-- the kind of a tensor key: "mask" or "indices"
local function key_kind(op, key)
    if key.dtype == "bool" then
        return "mask"
    elseif INDEX_DTYPES[key.dtype] then
        return "indices"
    end
    raise(("tide: %s: a tensor index must be bool (a mask) or int64/int32 (1-based indices), " ..
        "got %s; convert it with :bool() or :long()"):format(op, key.dtype))
end

-- the int64 indices raw as 1-based positions into dim d of size n (a negative one counted from
-- the end), checked: one read back (a position past its dim would land in another, or the
-- message name the kernel's own dim); the message names the first index at fault
local function checked_positions(op, raw, d, n)
    local pos = core.where(raw:lt(0), raw + (n + 1), raw)
    if pos:numel() > 0 then
        local bad = pos:lt(1):logical_or(pos:gt(n))
        if bad:any():item() then
            raise(("tide: %s: index %d is out of range for dim %d of size %d; indices are " ..
                "1-based: use 1..%d (or -%d..-1 from the end)"):format(op,
                raw:masked_select(bad)[1]:item(), d, n, n, n))
        end
    end
    return pos
end

-- idx's 1-based positions into dim d of x, flat and int64, a negative one counted from the end
local function positions(op, x, d, idx)
    same_device(op, x, idx)
    if x:dim() == 0 then
        raise(("tide: %s: a 0-dim tensor cannot be indexed by a tensor; use t:item()"):format(op))
    end
    return checked_positions(op, idx:reshape(-1):long(), d, x:size(d))
end

-- sizes with dim d replaced by the list ins
local function spliced(sizes, d, ins)
    local out = {}
    for i = 1, d - 1 do
        out[#out + 1] = sizes[i]
    end
    for _, s in ipairs(ins) do
        out[#out + 1] = s
    end
    for i = d + 1, #sizes do
        out[#out + 1] = sizes[i]
    end
    return out
end

-- x's slices along d at idx: index_select, the index's own shape in place of dim d
local function take(op, x, d, idx)
    local pos = positions(op, x, d, idx)
    local r = as_op(op, "index_select", x.index_select, x, d, pos)
    return r:reshape(spliced(x:size(), d, idx:size()))
end

-- ---- masks ----------------------------------------------------------------------------------

-- raises unless mask is shaped as x's first dims
local function check_mask(op, x, mask)
    same_device(op, x, mask)
    local k = mask:dim()
    local fits = k >= 1 and k <= x:dim()
    for d = 1, fits and k or 0 do
        fits = fits and mask:size(d) == x:size(d)
    end
    if not fits then
        raise(("tide: %s: the mask's shape %s does not match the shape %s of the tensor's " ..
            "first dims; a mask covers the first %s of them"):format(op, shape_str(mask:size()),
            shape_str(x:size()), k == 0 and "one or more" or tostring(k)))
    end
end

-- x's dims past the mask's
local function rest_of(x, k)
    local rest = {}
    for d = k + 1, x:dim() do
        rest[#rest + 1] = x:size(d)
    end
    return rest
end

local function masked_get(x, mask)
    check_mask("index", x, mask)
    local k = mask:dim()
    if k == x:dim() then
        return x:masked_select(mask)
    end
    local rows = x:reshape({ -1, unpack(rest_of(x, k)) })
    return rows:index_select(1, mask:reshape(-1):nonzero():reshape(-1))
end

-- mask spread over x's shape
local function spread(x, mask)
    local shape = mask:size()
    for _ = mask:dim() + 1, x:dim() do
        shape[#shape + 1] = 1
    end
    return mask:reshape(shape):expand(x:size())
end

local function masked_set(x, mask, v)
    check_mask("setindex", x, mask)
    local full = spread(x, mask)
    if not is_tensor(v) then
        return x:masked_fill_(full, v)
    end
    same_device("setindex", x, v)
    if v:numel() == 1 then
        return x:masked_fill_(full, v:reshape({}):to(x.dtype))
    end
    local count = mask:sum():item() -- (a read back: the shape of the values)
    local shape = { count, unpack(rest_of(x, mask:dim())) }
    local src = as_op("setindex", "expand", v.expand, v:to(x.dtype), shape)
    return x:masked_scatter_(full, src)
end

-- ---- index tensors along one dim ------------------------------------------------------------

-- writes v (a number, or a tensor broadcast to the slices' shape) into x's slices along d at idx
local function put(x, d, idx, v)
    local pos = positions("setindex", x, d, idx)
    if not is_tensor(v) then
        return x:index_fill_(d, pos, v)
    end
    same_device("setindex", x, v)
    local n = pos:numel()
    local src = as_op("setindex", "expand", v.expand, v:to(x.dtype),
        spliced(x:size(), d, idx:size()))
    local sizes = spliced(x:size(), d, { n })
    src = src:reshape(sizes)
    -- one scatter_ with the positions expanded over the slices (stride 0: the kernels copy a
    -- slice's rows whole, and the index is converted and checked once a position); the slices
    -- filled with -0.0 and src added there touched all of x (3.5x PyTorch's time)
    local ones = {}
    for i = 1, #sizes do
        ones[i] = i == d and n or 1
    end
    return x:scatter_(d, pos:reshape(ones):expand(sizes), src)
end

-- ---- Torch7's tables ------------------------------------------------------------------------

-- k as a number when it is a 0-dim int64/int32 tensor: PyTorch indexes with one as with an
-- integer (x[t[k, j]] selects, a view, as C[Xb[k, j]] in makemore's backward pass), k otherwise
local function scalar_index(k)
    if is_tensor(k) and k:dim() == 0 and INDEX_DTYPES[k.dtype] then
        return k:item()
    end
    return k
end

-- the range {a, b} (or {a}, or {a, b, step}) of a dim of size n as a start, a length and a
-- step: the positions a, a + step, ... up to b
local function range_of(op, r, dim, n)
    args.check_list(op, r, "a range")
    if #r > 3 then
        raise(("tide: %s: the range for dim %d has %d entries; write {first, last}, " ..
            "{first, last, step}, {i} or {}"):format(op, dim, #r))
    end
    -- a 0-dim int tensor stands for its integer (PyTorch's gen_seq[i][:seq_lens[i]])
    local a, b, step = scalar_index(r[1]), scalar_index(r[2] or r[1]), scalar_index(r[3] or 1)
    for _, v in ipairs({ a, b, step }) do
        if type(v) ~= "number" or not is_integer(v) then
            raise(("tide: %s: the range for dim %d must hold integers, got %s"):format(op, dim,
                describe(v)))
        end
    end
    if step < 1 then
        raise(("tide: %s: the step of the range for dim %d is %d; a step must be >= 1 (as " ..
            "PyTorch's; flip the tensor to go backwards)"):format(op, dim, step))
    end
    -- the ends clamp to the dim, as Python's slices do (a generate loop's idx[:, -block_size:]
    -- is idx[{{}, {-block_size, -1}}] however short idx is); a range ending before it starts,
    -- or past the dim, is empty
    local a0, b0 = a < 0 and n + a + 1 or a, b < 0 and n + b + 1 or b
    a0 = math.max(1, math.min(a0, n + 1))
    b0 = math.min(b0, n)
    return a0, math.max(0, b0 - a0 + 1), step
end

-- dim d of v narrowed to length elements from start, every step-th kept: a view (the windows
-- of one element, step apart, of unfold), as PyTorch's x[a:b:step]
local function sliced(v, d, start, length, step)
    v = v:narrow(d, start, length)
    if step == 1 or length == 0 then
        return v
    end
    local w = v:unfold(d, 1, step)
    return w:select(w:dim(), 1)
end

-- NumPy's newaxis (PyTorch's None: x[None, ...], mask[:, None, None, :]): a new dim of size 1
-- at its place, taking none of x's
local NEWAXIS = "newaxis"

-- key with its "..." (PyTorch's Ellipsis, t[..., -1]) replaced by as many {} (whole dims) as
-- x's dims past the key's other entries (none is fine); key itself when it has none
local function without_ellipsis(op, x, key)
    local at
    local new = 0 -- newaxis entries, which take no dim of x
    for i = 1, #key do
        if key[i] == "..." then
            if at then
                raise(('tide: %s: an index holds at most one "..." (indices %d and %d are)')
                    :format(op, at, i))
            end
            at = i
        elseif key[i] == NEWAXIS then
            new = new + 1
        end
    end
    if not at then
        return key
    end
    local whole = x:dim() - (#key - 1 - new)
    if whole < 0 then
        raise(('tide: %s: %d indices besides "..." for a tensor of %d dim%s'):format(op,
            #key - 1 - new, x:dim(), x:dim() == 1 and "" or "s"))
    end
    local out = { unpack(key, 1, at - 1) }
    for _ = 1, whole do
        out[#out + 1] = {}
    end
    for i = at + 1, #key do
        out[#out + 1] = key[i]
    end
    return out
end

-- raises for entry i of an index that is none of the kinds an index takes
local function bad_index(op, i, k)
    raise(("tide: %s: index %d must be a number, a range table, a tensor, \"...\" or " ..
        "tide.newaxis, got %s"):format(op, i, type(k) == "string" and ("%q"):format(k)
        or type(k)))
end

-- PyTorch's bool mask inside an index (loralib's lora_ind[enable_lora, :] = True): its k dims
-- as the k index tensors of its true elements (mask:nonzero()'s columns); each such tensor maps
-- to {mask, j, i} (the mask, its dim, its entry) for the check of the dim it stands for
local function masks_as_indices(op, key)
    local out, from
    for i = 1, #key do
        local k = is_tensor(key[i]) and byte_mask(key[i]) or key[i]
        if is_tensor(k) and k.dtype == "bool" then
            if k:dim() == 0 then
                raise(("tide: %s: a 0-dim bool mask indexes nothing (index %d); index with " ..
                    "a mask of the dims it picks"):format(op, i))
            end
            out, from = out or { unpack(key, 1, i - 1) }, from or {}
            local nz = k:nonzero()
            for j = 1, k:dim() do
                out[#out + 1] = nz:select(2, j)
                from[out[#out]] = { k, j, i }
            end
        elseif out then
            out[#out + 1] = key[i]
        end
    end
    return out or key, from
end

-- the view a table key's numbers and ranges read, and its index tensors as {dim, tensor} in
-- that view's dims (PyTorch's order: numbers select first, as basic indices)
local function table_view(op, x, key)
    args.check_list(op, key, "the index")
    local from
    key, from = masks_as_indices(op, key)
    key = without_ellipsis(op, x, key)
    local taking = #key -- the entries that take one of x's dims
    for i = 1, #key do
        if key[i] == NEWAXIS then
            taking = taking - 1
        elseif type(key[i]) == "string" then -- a stray string ("None") before the dim count
            bad_index(op, i, key[i])
        end
    end
    if taking > x:dim() then
        raise(("tide: %s: %d indices for a tensor of %d dim%s"):format(op, taking, x:dim(),
            x:dim() == 1 and "" or "s"))
    end
    local v, d, adv = x, 1, {}
    for i, k in ipairs(key) do
        k = byte_mask(scalar_index(k))
        if k == NEWAXIS then
            v = as_op(op, "unsqueeze", v.unsqueeze, v, d)
            d = d + 1
        elseif type(k) == "number" then
            if not is_integer(k) then
                raise(("tide: %s: index %d must be an integer, got %s"):format(op, i, tostring(k)))
            end
            v = as_op(op, "select", v.select, v, d, k)
        elseif type(k) == "table" then
            if next(k) ~= nil then
                v = sliced(v, d, range_of(op, k, i, v:size(d)))
            end
            d = d + 1
        elseif is_tensor(k) then
            key_kind(op, k)
            local m = from and from[k]
            if m and m[1]:size(m[2]) ~= v:size(d) then
                raise(("tide: %s: the mask at index %d has size %d in its dim %d, the dim it " ..
                    "stands for has %d; a mask's shape matches the dims it covers"):format(op,
                    m[3], m[1]:size(m[2]), m[2], v:size(d)))
            end
            adv[#adv + 1] = { d, k }
            d = d + 1
        else
            bad_index(op, i, k)
        end
    end
    return v, adv
end

-- ---- several index tensors (PyTorch's advanced indexing) ------------------------------------
-- The index tensors broadcast together to a shape S and pick the elements v[i1, i2, ...] along
-- their dims: v with those dims moved first and merged is indexed by one linear position. The
-- result's S dims stand where the index dims were when those were adjacent, first otherwise.

-- the linear positions (1-based, shape S) of the index tensors adv into their dims of v, each
-- checked against its dim (one read back each: a position past one dim would land in another)
local function linear(op, v, adv)
    local lin
    local mult = 1
    for j = #adv, 1, -1 do
        local d, idx = adv[j][1], adv[j][2]
        same_device(op, v, idx)
        local n = v:size(d)
        local pos = checked_positions(op, idx:long(), d, n)
        local term = (pos - 1) * mult
        lin = lin and lin + term or term
        mult = mult * n
    end
    return lin + 1, mult
end

-- the order of v's dims with the index dims first, the other dims' sizes, and whether the
-- index dims are adjacent
local function layout(v, adv)
    local order, is_adv, rest = {}, {}, {}
    for j, a in ipairs(adv) do
        order[j] = a[1]
        is_adv[a[1]] = true
    end
    for d = 1, v:dim() do
        if not is_adv[d] then
            order[#order + 1] = d
            rest[#rest + 1] = v:size(d)
        end
    end
    local adjacent = true
    for j = 2, #adv do
        adjacent = adjacent and adv[j][1] == adv[j - 1][1] + 1
    end
    return order, rest, adjacent
end

local function concat(a, b)
    local out = { unpack(a) }
    for _, x in ipairs(b) do
        out[#out + 1] = x
    end
    return out
end

local function advanced_get(op, v, adv)
    local lin, count = linear(op, v, adv)
    local order, rest, adjacent = layout(v, adv)
    local flat = v:permute(order):reshape(concat({ count }, rest))
    local S = lin.shape
    local r = flat:index_select(1, lin:reshape(-1)):reshape(concat(S, rest))
    local before = adv[1][1] - 1 -- the dims of v ahead of the (adjacent) index dims
    if not adjacent or before == 0 then
        return r
    end
    local perm = {}
    for i = 1, before do
        perm[#perm + 1] = #S + i
    end
    for i = 1, #S do
        perm[#perm + 1] = i
    end
    for i = #S + before + 1, r:dim() do
        perm[#perm + 1] = i
    end
    return r:permute(perm)
end

-- writes value at v's elements picked by adv (added to them with accumulate), in place
local function advanced_set(op, v, adv, value, accumulate)
    local lin, count = linear(op, v, adv)
    local order, rest, adjacent = layout(v, adv)
    local moved = v:permute(order) -- a view of v
    local work = moved:contiguous() -- moved itself when its layout allows
    local flat = work:view(concat({ count }, rest))
    local at = lin:reshape(-1)
    local n = at:numel()
    if not is_tensor(value) then
        if accumulate then
            value = core.full({}, value, { dtype = v.dtype, device = v.device })
        else
            flat:index_fill_(1, at, value)
        end
    end
    if is_tensor(value) then
        same_device(op, v, value)
        -- the value in the result's layout (S where adv was), then as rows of flat
        local S = lin.shape
        local shape = concat(S, rest)
        if adjacent and adv[1][1] > 1 then
            local before = adv[1][1] - 1
            local lead = {}
            for i = 1, before do
                lead[i] = rest[i]
            end
            local tail = {}
            for i = before + 1, #rest do
                tail[#tail + 1] = rest[i]
            end
            local src = as_op(op, "expand", value.expand, value:to(v.dtype),
                concat(concat(lead, S), tail))
            local perm = {}
            for i = 1, #S do
                perm[i] = before + i
            end
            for i = 1, before do
                perm[#perm + 1] = i
            end
            for i = before + #S + 1, before + #S + #tail do
                perm[#perm + 1] = i
            end
            value = src:permute(perm)
        else
            value = as_op(op, "expand", value.expand, value:to(v.dtype), shape)
        end
        local rows = value:reshape(concat({ n }, rest))
        if accumulate then
            flat:index_add_(1, at, rows)
        else
            local ones = { n }
            for i = 1, #rest do
                ones[i + 1] = 1
            end
            flat:scatter_(1, at:view(ones):expand(rows:size()), rows)
        end
    end
    if not rawequal(work, moved) then
        moved:copy_(work)
    end
    return v
end

-- ---- the handlers ---------------------------------------------------------------------------

function M.get(x, key)
    key = byte_mask(key)
    if is_tensor(key) and x:dim() > 0 and scalar_index(key) ~= key then
        key = { key } -- a 0-dim int index selects (a view), as a number does
    end
    if is_tensor(key) then
        if key_kind("index", key) == "mask" then
            return masked_get(x, key)
        end
        return take("index", x, 1, key)
    end
    local v, adv = table_view("index", x, key)
    if #adv == 1 then
        return take("index", v, adv[1][1], adv[1][2])
    elseif #adv > 1 then
        return advanced_get("index", v, adv)
    end
    return v
end

-- value without its leading size-1 dims, as PyTorch's setitem takes it (a[0] = ones(1, 2),
-- a[1:3] = ones(1, 1, 2, 2)): squeeze views, so a gradient reaches value in its own shape;
-- broadcasting puts back what the target needs (also for t[i] = v, lua/tensor.c)
function M.strip_leading_ones(value)
    while value:dim() > 0 and value:size(1) == 1 do
        value = value:squeeze(1)
    end
    return value
end

function M.set(x, key, value)
    if not is_tensor(value) and type(value) ~= "number" and type(value) ~= "boolean" then
        raise(("tide: setindex: value must be a number or a tensor, got %s"):format(type(value)))
    end
    if is_tensor(value) then
        value = M.strip_leading_ones(value)
    elseif type(value) == "boolean" then -- (a mask's m[idx] = true, as PyTorch's True)
        value = value and 1 or 0
    end
    key = byte_mask(key)
    if is_tensor(key) and x:dim() > 0 and scalar_index(key) ~= key then
        key = { key }
    end
    if is_tensor(key) then
        if key_kind("setindex", key) == "mask" then
            return masked_set(x, key, value)
        end
        return put(x, 1, key, value)
    end
    local v, adv = table_view("setindex", x, key)
    if #adv == 1 then
        return put(v, adv[1][1], adv[1][2], value)
    elseif #adv > 1 then
        return advanced_set("setindex", v, adv, value, false)
    elseif is_tensor(value) then
        same_device("setindex", x, value)
        return as_op("setindex", "copy_", v.copy_, v, value)
    end
    return v:fill_(value)
end

-- x:index_put_(indices, values[, accumulate = false]): PyTorch's, indices a list of int64 or
-- int32 tensors for x's leading dims (1-based); values broadcast to the picked elements, added
-- to them with accumulate (repeats add up), written otherwise. index_put is the same on a clone.
function core.Tensor.index_put_(x, indices, values, accumulate, ...)
    local op = "index_put_"
    args.no_extra(op, 4, ...)
    args.check(op, x)
    if type(indices) ~= "table" or is_tensor(indices) or #indices == 0 then
        raise(("tide: %s: indices must be a list of index tensors, one per leading dim, got %s")
            :format(op, is_tensor(indices) and "a tensor (wrap it: {idx})" or type(indices)))
    end
    args.check_list(op, indices, "indices")
    for i = 1, #indices do -- not ipairs: a hole ({nil, idx}) would end it and pass
        local idx = indices[i]
        if not is_tensor(idx) or not (INDEX_DTYPES[idx.dtype] or idx.dtype == "bool"
                or idx.dtype == "uint8") then
            raise(("tide: %s: indices[%d] must be an int64, int32 or bool tensor, got %s")
                :format(op, i, describe(idx)))
        end
    end
    -- a bool mask stands for as many dims as it has (PyTorch's): its true elements' indices
    local from
    indices, from = masks_as_indices(op, indices)
    if #indices > x:dim() then
        raise(("tide: %s: %d index tensors for a tensor of %d dims"):format(op, #indices,
            x:dim()))
    end
    local adv = {}
    for i, idx in ipairs(indices) do
        local m = from and from[idx]
        if m and m[1]:size(m[2]) ~= x:size(i) then
            raise(("tide: %s: the mask at indices[%d] has size %d in its dim %d, the dim it " ..
                "stands for has %d; a mask's shape matches the dims it covers"):format(op,
                m[3], m[1]:size(m[2]), m[2], x:size(i)))
        end
        adv[i] = { i, idx }
    end
    if not is_tensor(values) and type(values) ~= "number" then
        raise(("tide: %s: values must be a tensor or a number, got %s"):format(op, type(values)))
    end
    if accumulate ~= nil and type(accumulate) ~= "boolean" then
        raise(("tide: %s: accumulate must be a boolean, got %s"):format(op, type(accumulate)))
    end
    return advanced_set(op, x, adv, values, accumulate == true)
end

function core.Tensor.index_put(x, indices, values, accumulate, ...)
    args.no_extra("index_put", 4, ...)
    args.check("index_put", x)
    return as_op("index_put", "index_put_", core.Tensor.index_put_, x:clone(), indices, values,
        accumulate)
end

core._internal.set_subscripts(M.get, M.set)

-- a first table key (lua/tensor.c) loads this module without index_put(_)'s lazy stub, which
-- would install their keyword form (x:index_put_({i}, v, {accumulate = true})): do it here
local keywords = package.loaded["tide.tensor_keywords"]
if keywords then
    keywords.install(package.loaded.tide or {}, { "index_put", "index_put_" })
end

return M
