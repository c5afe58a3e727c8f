-- keywords_shapes_spec.lua: PyTorch's keyword arguments on the shape ops, joins, splits, diagonals and index ops (lua/tide/tensor_keywords/shapes.lua): each keyword form against its positional form and PyTorch 1.13's values, the method and the tide.X function, and the unknown-key and given-twice errors of every signature.
local tide = require("tide")

-- x = torch.arange(6.).reshape(2, 3); idx = [[0, 1], [1, 0]] in PyTorch (1-based here)
local function X()
    return tide.tensor({ { 0, 1, 2 }, { 3, 4, 5 } }):float()
end
local function IDX()
    return tide.tensor({ { 1, 2 }, { 2, 1 } })
end

-- a result (a tensor or a list of tensors) as nested Lua lists
local function lists(r)
    if tide.is_tensor(r) then
        return r:tolist()
    end
    local out = {}
    for i, t in ipairs(r) do
        out[i] = lists(t)
    end
    return out
end

-- the keyword form's result and the positional form's are both PyTorch's values
local function agree(expected, kw, pos)
    assert.are.same(expected, lists(kw))
    assert.are.same(expected, lists(pos))
end

local function err(f)
    local ok, e = pcall(f)
    assert.is_false(ok)
    return tostring(e)
end

local function has(msg, prefix)
    assert.truthy(msg:find(prefix, 1, true), msg)
end

describe("keyword arguments of the shape ops", function()
    local x, idx
    before_each(function()
        x, idx = X(), IDX()
    end)

    it("joins: cat, concat, concatenate (axis), stack", function()
        local cat = { { 0, 1, 2, 0, 1, 2 }, { 3, 4, 5, 3, 4, 5 } }
        agree(cat, tide.cat({ x, x }, { dim = 2 }), tide.cat({ x, x }, 2))
        agree(cat, tide.concat({ x, x }, { dim = 2 }), tide.concat({ x, x }, 2))
        agree(cat, tide.concatenate({ x, x }, { axis = 2 }), tide.concatenate({ x, x }, 2))
        agree(cat, tide.concatenate({ x, x }, { dim = -1 }), tide.cat({ x, x }, -1))
        agree({ { { 0, 1, 2 }, { 0, 1, 2 } }, { { 3, 4, 5 }, { 3, 4, 5 } } },
            tide.stack({ x, x }, { dim = 2 }), tide.stack({ x, x }, 2))
        has(err(function() return tide.concat({ x, tide.zeros({ 3 }) }, 1) end), "tide: concat:")
        has(err(function() return tide.concatenate({ x, x }, 2, { axis = 2 }) end),
            "tide: concatenate: axis given twice, as dim (argument #2) and by name")
    end)

    it("splits: split, chunk, unbind, tensor_split, hsplit, vsplit, dsplit", function()
        local halves = { { { 0, 1 }, { 3, 4 } }, { { 2 }, { 5 } } }
        local one_two = { { { 0 }, { 3 } }, { { 1, 2 }, { 4, 5 } } }
        agree(halves, x:split(2, { dim = 2 }), x:split(2, 2))
        agree(halves, tide.split(x, { split_size = 2, dim = 2 }), tide.split(x, 2, 2))
        agree(one_two, tide.split(x, { split_size_or_sections = { 1, 2 }, dim = 2 }),
            x:split({ 1, 2 }, 2))
        agree(one_two, x:split_with_sizes({ split_sizes = { 1, 2 }, dim = 2 }),
            x:split_with_sizes({ 1, 2 }, 2))
        agree(halves, x:chunk(2, { dim = 2 }), x:chunk(2, 2))
        agree(halves, tide.chunk(x, { chunks = 2, dim = 2 }), tide.chunk(x, 2, 2))
        agree({ { 0, 3 }, { 1, 4 }, { 2, 5 } }, x:unbind({ dim = 2 }), tide.unbind(x, 2))
        agree(halves, x:tensor_split({ sections = 2, dim = 2 }), x:tensor_split(2, 2))
        agree(one_two, tide.tensor_split(x, { indices = { 1 }, dim = 2 }), x:tensor_split({ 1 }, 2))
        agree(one_two, x:tensor_split({ tensor_indices_or_sections = tide.tensor({ 1 }), dim = 2 }),
            x:tensor_split({ 1 }, 2))
        agree({ { { 0 }, { 3 } }, { { 1 }, { 4 } }, { { 2 }, { 5 } } }, x:hsplit({ sections = 3 }),
            tide.hsplit(x, 3))
        agree({ { { 0, 1, 2 } }, { { 3, 4, 5 } } }, tide.vsplit(x, { indices = { 1 } }),
            x:vsplit({ 1 }))
        local x3 = x:reshape({ 1, 2, 3 })
        agree({ { { { 0 }, { 3 } } }, { { { 1 }, { 4 } } }, { { { 2 }, { 5 } } } },
            x3:dsplit({ sections = 3 }), x3:dsplit(3))
        has(err(function() return x:split(2, { split_size_or_sections = 2 }) end),
            "tide: split: split_size_or_sections given twice, as split_size (argument #2) and by name")
        has(err(function() return x:tensor_split({ sections = 2, indices = { 1 } }) end),
            "tide: tensor_split: ")
    end)

    it("views: squeeze, unsqueeze, flatten, unflatten, transpose and its names, movedim", function()
        local xt = { { 0, 3 }, { 1, 4 }, { 2, 5 } }
        local x1 = x:unsqueeze(1)
        agree(lists(x), x1:squeeze({ dim = 1 }), tide.squeeze(x1, 1))
        agree({ lists(x) }, x:unsqueeze({ dim = 1 }), tide.unsqueeze(x, 1))
        local x3 = x:reshape({ 1, 2, 3 })
        agree({ { 0, 1, 2, 3, 4, 5 } }, x3:flatten({ start_dim = 2, end_dim = -1 }),
            tide.flatten(x3, 2, -1))
        agree({ { { 0 }, { 1 }, { 2 } }, { { 3 }, { 4 }, { 5 } } },
            tide.unflatten(x, { dim = 2, sizes = { 3, 1 } }), x:unflatten(2, { 3, 1 }))
        agree(xt, x:transpose({ dim0 = 1, dim1 = 2 }), x:transpose(1, 2))
        agree(xt, tide.transpose(x, 1, { dim1 = 2 }), tide.transpose(x, 1, 2))
        agree(xt, x:swapdims({ dim0 = 1, dim1 = 2 }), x:swapdims(1, 2))
        agree(xt, tide.swapaxes(x, { axis0 = 1, axis1 = 2 }), x:swapaxes(1, 2))
        agree({ { { 0 }, { 1 }, { 2 } }, { { 3 }, { 4 }, { 5 } } },
            x3:movedim({ source = 1, destination = 3 }), x3:movedim(1, 3))
        agree({ { { 0 }, { 1 }, { 2 } }, { { 3 }, { 4 }, { 5 } } },
            tide.moveaxis(x3, { source = 1, destination = 3 }), tide.moveaxis(x3, 1, 3))
        agree({ { 1, 2 }, { 4, 5 } }, x:narrow({ dim = 2, start = 2, length = 2 }), x:narrow(2, 2, 2))
        agree({ { 1, 2 }, { 4, 5 } }, tide.narrow_copy(x, 2, { start = 2, length = 2 }),
            x:narrow_copy(2, 2, 2))
        agree({ 2, 5 }, x:select({ dim = 2, index = 3 }), tide.select(x, 2, 3))
        agree({ { { 0, 1 }, { 1, 2 } }, { { 3, 4 }, { 4, 5 } } },
            x:unfold({ dimension = 2, size = 2, step = 1 }), x:unfold(2, 2, 1))
    end)

    it("in-place views: squeeze_, unsqueeze_, transpose_, swapdims_, swapaxes_", function()
        assert.are.same({ 1, 2, 3 }, x:clone():unsqueeze_({ dim = 1 }).shape)
        assert.are.same({ 2, 3 }, x:unsqueeze(1):squeeze_({ dim = 1 }).shape)
        assert.are.same({ { 0, 3 }, { 1, 4 }, { 2, 5 } }, x:clone():transpose_({ dim0 = 1, dim1 = 2 }):tolist())
        assert.are.same({ 3, 2 }, x:clone():swapdims_(1, { dim1 = 2 }).shape)
        assert.are.same({ 3, 2 }, x:clone():swapaxes_({ axis0 = 1, axis1 = 2 }).shape)
    end)

    it("squeeze takes a list of dims (PyTorch 2's tuple), squeeze_ too", function()
        -- torch.zeros(2, 1, 3, 1).squeeze((1, 3)) is [2, 3]; a dim not of size 1 stays
        local z = tide.zeros(2, 1, 3, 1)
        assert.are.same({ 2, 3 }, z:squeeze({ 2, 4 }).shape)
        assert.are.same({ 2, 3 }, tide.squeeze(z, { -1, 2 }).shape)
        assert.are.same({ 2, 3, 1 }, z:squeeze({ 1, 2 }).shape)
        assert.are.same({ 2, 3 }, z:squeeze({ dim = { 2, 4 } }).shape)
        local none = z:squeeze({})
        assert.are.same({ 2, 1, 3, 1 }, none.shape)
        none:fill_(7) -- a view: writes through
        assert.are.equal(42, z:sum():item())
        assert.are.same({}, tide.tensor(3):squeeze({ 1 }).shape)
        local y = z:clone()
        assert.are.equal(y, y:squeeze_({ 2, 4 }))
        assert.are.same({ 2, 3 }, y.shape)
        local w = tide.zeros(2, 1, 3, 1):requires_grad_()
        w:squeeze({ 2, 4 }):sum():backward()
        assert.are.same({ 2, 1, 3, 1 }, w.grad.shape)
        has(err(function() return z:squeeze({ 2, -3 }) end),
            "tide: squeeze: dim 2 appears twice in the list (as its entry 2); list each dim once")
        has(err(function() return z:squeeze({ 5 }) end),
            "tide: squeeze: dim 5 is out of range for a tensor with 4 dims")
    end)

    it("reorderings: roll, flip, rot90, diff, repeat_interleave", function()
        agree({ { 2, 0, 1 }, { 5, 3, 4 } }, x:roll(1, { dims = 2 }), x:roll(1, 2))
        agree({ { 5, 0, 1 }, { 2, 3, 4 } }, tide.roll(x, { shifts = 1 }), x:roll(1))
        agree({ { 3, 4, 5 }, { 0, 1, 2 } }, x:flip({ dims = { 1 } }), tide.flip(x, { 1 }))
        agree({ { 2, 5 }, { 1, 4 }, { 0, 3 } }, x:rot90({ k = 1, dims = { 1, 2 } }), x:rot90(1, { 1, 2 }))
        agree({ { 3, 3, 3 } }, x:diff({ dim = 1, n = 1 }), x:diff(1, 1))
        local p, a = x:narrow(2, 1, 1), x:narrow(2, 3, 1)
        agree({ { 0, 1, 1, 0 }, { 0, 1, 1, 0 } },
            tide.diff(x, { n = 1, dim = 2, prepend = p, append = a }),
            x:diff(1, 2, { prepend = p, append = a }))
        agree({ { 0, 1, 2 }, { 0, 1, 2 }, { 3, 4, 5 }, { 3, 4, 5 } },
            x:repeat_interleave({ repeats = 2, dim = 1 }), x:repeat_interleave(2, 1))
        agree({ 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5 }, tide.repeat_interleave(x, { repeats = 2 }),
            x:repeat_interleave(2))
        agree({ { 0, 1, 2 }, { 0, 1, 2 }, { 3, 4, 5 }, { 3, 4, 5 } },
            x:repeat_interleave(2, { dim = 1, output_size = 4 }), x:repeat_interleave(2, 1, { output_size = 4 }))
        -- PyTorch's repeats tensor alone: 1-based indices
        agree({ 1, 2, 2 }, tide.repeat_interleave(tide.tensor({ 1, 2 }), { output_size = 3 }),
            tide.repeat_interleave(tide.tensor({ 1, 2 })))
    end)

    it("triangles and diagonals: tril, triu, diagonal, diag, diag_embed, diagflat", function()
        agree({ { 0, 1, 0 }, { 3, 4, 5 } }, tide.tril(x, { diagonal = 1 }), tide.tril(x, 1))
        agree({ { 0, 1, 2 }, { 0, 0, 5 } }, x:triu({ diagonal = 1 }), x:triu(1))
        agree({ { 0, 0, 0 }, { 3, 0, 0 } }, x:clone():tril_({ diagonal = -1 }), x:clone():tril_(-1))
        agree({ { 0, 1, 2 }, { 0, 0, 5 } }, x:clone():triu_({ diagonal = 1 }), x:clone():triu_(1))
        agree({ 1, 5 }, x:diagonal({ offset = 1, dim1 = 1, dim2 = 2 }), x:diagonal(1, 1, 2))
        agree({ 1, 5 }, tide.diagonal(x, { offset = 1 }), tide.diagonal(x, 1))
        agree({ 1, 5 }, x:diag({ diagonal = 1 }), tide.diag(x, 1))
        local v = tide.tensor({ 1, 2 })
        agree({ { 0, 1, 0 }, { 0, 0, 2 }, { 0, 0, 0 } }, v:diag_embed({ offset = 1 }),
            tide.diag_embed(v, 1))
        agree({ { 0, 0, 0 }, { 1, 0, 0 }, { 0, 2, 0 } }, tide.diagflat(v, { offset = -1 }),
            v:diagflat(-1))
    end)

    it("gathers: gather (sparse_grad = false accepted), take_along_dim, index_select", function()
        agree({ { 0, 1 }, { 4, 3 } }, x:gather({ dim = 2, index = idx }), x:gather(2, idx))
        agree({ { 0, 1 }, { 4, 3 } }, tide.gather(x, 2, idx, { sparse_grad = false }),
            tide.gather(x, 2, idx))
        has(err(function() return x:gather(2, idx, { sparse_grad = true }) end),
            "tide: gather: sparse_grad = true is not supported")
        has(err(function() return x:gather(2, idx, { sparse_grad = 1 }) end),
            "tide: gather: sparse_grad must be true or false, got number")
        agree({ { 0, 1 }, { 4, 3 } }, x:take_along_dim({ indices = idx, dim = 2 }),
            tide.take_along_dim(x, idx, 2))
        local i = tide.tensor({ 2 })
        agree({ { 3, 4, 5 } }, x:index_select({ dim = 1, index = i }), tide.index_select(x, 1, i))
    end)

    it("scatter: src or value, reduce; scatter_, scatter_add, scatter_reduce", function()
        local src = x * 10
        agree({ { 0, 10, 2 }, { 40, 30, 5 } }, x:scatter(2, idx, { src = src }), x:scatter(2, idx, src))
        agree({ { -1, -1, 2 }, { -1, -1, 5 } }, x:scatter(2, idx, { value = -1 }), x:scatter(2, idx, -1))
        agree({ { 0, 11, 2 }, { 43, 34, 5 } },
            tide.scatter(x, { dim = 2, index = idx, src = src, reduce = "add" }),
            tide.scatter(x, 2, idx, src, { reduce = "add" }))
        agree({ { 0, 2, 2 }, { 6, 8, 5 } }, x:scatter(2, idx, { value = 2, reduce = "multiply" }),
            x:scatter(2, idx, 2, { reduce = "multiply" }))
        agree({ { 0, 11, 2 }, { 43, 34, 5 } }, x:clone():scatter_(2, idx, { src = src, reduce = "add" }),
            x:clone():scatter_(2, idx, src, { reduce = "add" }))
        agree({ { -1, -1, 2 }, { -1, -1, 5 } }, x:clone():scatter_(2, { index = idx, value = -1 }),
            x:clone():scatter_(2, idx, -1))
        agree({ { 0, 11, 2 }, { 43, 34, 5 } }, x:scatter_add({ dim = 2, index = idx, src = src }),
            tide.scatter_add(x, 2, idx, src))
        agree({ { 0, 11, 2 }, { 43, 34, 5 } }, x:clone():scatter_add_(2, idx, { src = src }),
            x:clone():scatter_add_(2, idx, src))
        agree({ { 0, 10, 2 }, { 40, 30, 5 } },
            x:scatter_reduce(2, idx, src, { reduce = "amax", include_self = false }),
            x:scatter_reduce(2, idx, src, "amax", { include_self = false }))
        agree({ { 0, 10, 2 }, { 40, 30, 5 } },
            tide.scatter_reduce(x, { dim = 2, index = idx, src = src, reduce = "amax", include_self = false }),
            x:clone():scatter_reduce_(2, idx, src, "amax", { include_self = false }))
        -- src and value are one place: given both, it raises and x is left as it was
        local y = x:clone()
        has(err(function() return y:scatter_(2, idx, { src = src, value = 0 }) end),
            "tide: scatter_: value given twice, as src (argument #4) and by name")
        has(err(function() return x:scatter(2, idx, src, { value = 0 }) end),
            "tide: scatter: value given twice, as src (argument #4) and by name")
        assert.are.same(lists(x), y:tolist())
    end)

    it("index ops: index_add (alpha), index_copy, index_fill, masked_fill", function()
        local i, ones = tide.tensor({ 1 }), tide.ones({ 2, 1 })
        agree({ { 2, 1, 2 }, { 5, 4, 5 } }, x:index_add({ dim = 2, index = i, source = ones, alpha = 2 }),
            x:index_add(2, i, ones, { alpha = 2 }))
        agree({ { 2, 1, 2 }, { 5, 4, 5 } }, x:clone():index_add_(2, i, { source = ones, alpha = 2 }),
            x:clone():index_add_(2, i, ones, { alpha = 2 }))
        agree({ { 2, 1, 2 }, { 5, 4, 5 } }, tide.index_add(x, 2, i, ones, { alpha = 2 }),
            x:index_add(2, i, ones * 2))
        agree({ { 9, 1, 2 }, { 9, 4, 5 } }, tide.index_copy(x, { dim = 2, index = i, source = ones * 9 }),
            x:index_copy(2, i, ones * 9))
        agree({ { 9, 1, 2 }, { 9, 4, 5 } }, x:clone():index_copy_(2, i, { source = ones * 9 }),
            x:clone():index_copy_(2, i, ones * 9))
        agree({ { -1, 1, 2 }, { -1, 4, 5 } }, x:index_fill({ dim = 2, index = i, value = -1 }),
            tide.index_fill(x, 2, i, -1))
        agree({ { -1, 1, 2 }, { -1, 4, 5 } }, x:clone():index_fill_(2, { index = i, value = -1 }),
            x:clone():index_fill_(2, i, -1))
        agree({ { 0, 1, 2 }, { 0, 0, 0 } }, x:masked_fill({ mask = x:gt(2), value = 0 }),
            tide.masked_fill(x, x:gt(2), 0))
        agree({ { 0, 1, 2 }, { 0, 0, 0 } }, x:clone():masked_fill_(x:gt(2), { value = 0 }),
            x:clone():masked_fill_(x:gt(2), 0))
    end)

    it("scatters of views: select_scatter, diagonal_scatter", function()
        agree({ { 0, 1, 2 }, { 0, 0, 0 } }, x:select_scatter({ src = tide.zeros({ 3 }), dim = 1, index = 2 }),
            tide.select_scatter(x, tide.zeros({ 3 }), 1, 2))
        local d = tide.tensor({ 7, 8 })
        agree({ { 0, 7, 2 }, { 3, 4, 8 } }, tide.diagonal_scatter(x, d, { offset = 1, dim1 = 1, dim2 = 2 }),
            x:diagonal_scatter(d, 1, 1, 2))
    end)
end)
