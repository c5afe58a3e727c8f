-- tide.utils — seeing what training does: make_grid and save_image (torchvision 0.14's), the
-- lazy field tensorboard (tide.utils.tensorboard.SummaryWriter, PyTorch's), and checkpoint
-- (torch.utils.checkpoint's: recompute a block in backward instead of keeping its activations)
-- and checkpoint_sequential (the same over the runs of a Sequential);
-- data is tide.data under torch.utils.data's name, for ported scripts; benchmark is
-- torch.utils.benchmark's Timer, Measurement and Compare; chain and partial are itertools.chain
-- and functools.partial.
local image = require("tide.utils.image")
local compat = require("tide._compat")

local M = {
    make_grid = image.make_grid,
    save_image = image.save_image,
}

-- chain(a, b, ...): Python's itertools.chain over lists, as one new list (a's items, then b's,
-- ...): optim.Adam(tide.utils.chain(G:parameters(), D:parameters()), {lr = ...}) is
-- Adam(itertools.chain(G.parameters(), D.parameters()), lr=...)
function M.chain(...)
    local out, n = {}, select("#", ...)
    for i = 1, n do
        local l = select(i, ...)
        if type(l) ~= "table" or l.__ismodule then
            error(("tide: utils.chain: argument %d is a %s, expected a list (model:parameters())")
                :format(i, type(l) == "table" and "module" or type(l)), 2)
        end
        for _, v in ipairs(l) do
            out[#out + 1] = v
        end
    end
    return out
end

-- a trailing table of keywords: a plain table (no metatable) with no list part
local function is_kw(t)
    return type(t) == "table" and getmetatable(t) == nil and #t == 0
end

-- partial(fn, ...): Python's functools.partial. The given positional arguments come first, and a
-- trailing keyword table is merged under the call's own (the call's keywords win):
-- norm_layer = tide.utils.partial(nn.LayerNorm, {eps = 1e-6}); norm_layer(dim) is
-- nn.LayerNorm(dim, {eps = 1e-6}), norm_layer(dim, {eps = 1e-5}) takes 1e-5.
-- .func, .args and .keywords read as Python's.
function M.partial(fn, ...)
    local mt = type(fn) == "table" and getmetatable(fn)
    if type(fn) ~= "function" and not (mt and mt.__call) then
        error(("tide: utils.partial: the first argument is a %s, expected a function or class " ..
            "(functools.partial(nn.LayerNorm, eps=1e-6) is tide.utils.partial(nn.LayerNorm, " ..
            "{eps = 1e-6}))"):format(type(fn)), 2)
    end
    local args, n = { ... }, select("#", ...)
    local keywords = {}
    if n > 0 and is_kw(args[n]) then
        for k, v in pairs(args[n]) do
            keywords[k] = v
        end
        args[n] = nil
        n = n - 1
    end
    local p = { func = fn, args = args, keywords = keywords }
    -- __name: an object, so a partial given by position is a value, not an options table
    return setmetatable(p, { __name = "functools.partial", __call = function(_, ...)
        local call, m = {}, 0
        for i = 1, n do
            m = m + 1
            call[m] = args[i]
        end
        local extra, k = { ... }, select("#", ...)
        local kw = nil
        if k > 0 and is_kw(extra[k]) then
            kw = extra[k]
            k = k - 1
        end
        for i = 1, k do
            m = m + 1
            call[m] = extra[i]
        end
        if next(keywords) ~= nil or kw ~= nil then
            local merged = {}
            for key, v in pairs(keywords) do
                merged[key] = v
            end
            for key, v in pairs(kw or {}) do
                merged[key] = v
            end
            m = m + 1
            call[m] = merged
        end
        return fn(compat.unpack(call, 1, m))
    end })
end

local lazy = { tensorboard = "tide.utils.tensorboard", checkpoint = "tide.utils.checkpoint",
    checkpoint_sequential = "tide.utils.checkpoint_sequential", data = "tide.data",
    benchmark = "tide.utils.benchmark" }

return require("tide._lazy")(M, lazy)
