-- tide.einops: the einops library's rearrange / reduce / repeat (repeat_) and its layers
-- Rearrange / Reduce, in pure Lua over tide's reshape, permute, expand and reductions (so
-- gradients flow through them). The pattern language is einops': named axes, parenthesized
-- groups on either side (composition "(h w)" and decomposition with sizes given by name),
-- "..." for the dims the pattern does not name, "1" and "()" unit axes, and for repeat_ new axes
-- (named with a size, or anonymous numbers) on the right. Sizes are a trailing table:
-- Python's rearrange(t, 'b n (h d) -> b h n d', h = 8) is
-- einops.rearrange(t, "b n (h d) -> b h n d", {h = 8}). A list of tensors as input is stacked
-- on a new first dim first, as einops does.
-- Patterns are parsed once per (operation, pattern) and planned once per (rank, sizes, shape).
local raise = require("tide.autograd.raise")
local unpack = require("tide._compat").unpack
local is_complex = require("tide.complex.tensor").is

local M = {}

-- how many times a pattern was parsed / planned (tests read these to check the caches)
M._stats = { parses = 0, recipes = 0, plans = 0 }

local REDUCTIONS = { mean = true, sum = true, max = true, min = true, prod = true }

-- a tensor, real or complex (lua/tide/complex/: its reshape / permute / expand / cat are the
-- ops einops runs, so a complex tensor is rearranged / repeated as PyTorch's)
local function is_tensor(x)
    local tide = package.loaded["tide"] or require("tide")
    return tide.is_tensor(x) or is_complex(x)
end

local function fail(op, pattern, msg)
    raise(('tide: einops.%s(x, "%s"): %s'):format(op, tostring(pattern), msg))
end

local function is_int(v)
    return type(v) == "number" and v == math.floor(v) and v > -math.huge and v < math.huge
end

local function group_str(axes)
    local parts = {}
    for i, a in ipairs(axes) do
        parts[i] = a:match("^#%d+_(%d+)$") or a:gsub("^%.%.%.%d+$", "...")
    end
    return "(" .. table.concat(parts, " ") .. ")"
end

---------------------------------------------------------------------------------------------
-- parsing: one side of the pattern -> { groups = {{axis names}...}, ellipsis = bool,
-- ellipsis_in_group = bool }; an unparenthesized name is a group of one axis, "1" and "()"
-- are groups of none, an anonymous number n > 1 is a fresh axis "#<k>_<n>" of length n
---------------------------------------------------------------------------------------------
local function parse_side(op, pattern, text, side, anon)
    local groups, seen = {}, {}
    local res = { groups = groups, ellipsis = false, ellipsis_in_group = false }
    local cur -- the open group, if any
    local i, n = 1, #text
    local function add(name)
        if seen[name] then
            fail(op, pattern, ("axis %s appears twice on the %s side: name each axis once per side")
                :format(name == "..." and "..." or name, side))
        end
        seen[name] = true
        if cur then
            cur[#cur + 1] = name
        else
            groups[#groups + 1] = { name }
        end
    end
    while i <= n do
        local c = text:sub(i, i)
        if c:match("%s") then
            i = i + 1
        elseif text:sub(i, i + 2) == "..." then
            if res.ellipsis then
                fail(op, pattern, ("... appears twice on the %s side: use it at most once per side")
                    :format(side))
            end
            res.ellipsis = true
            if cur then
                res.ellipsis_in_group = true
            end
            add("...")
            if not cur then
                groups[#groups].bare = true -- a bare ... : one group per dim it stands for
            end
            i = i + 3
        elseif c == "(" then
            if cur then
                fail(op, pattern, "nested parentheses: groups cannot contain groups; write (a b c)")
            end
            cur = {}
            i = i + 1
        elseif c == ")" then
            if not cur then
                fail(op, pattern,
                    ("a ) on the %s side closes no ( : balance the parentheses"):format(side))
            end
            groups[#groups + 1] = cur
            cur = nil
            i = i + 1
        elseif c:match("[%a_]") then
            local name = text:match("^[%w_]+", i)
            i = i + #name
            if name == "_" then
                fail(op, pattern, "axis name _ is not allowed: name the axis, e.g. a")
            end
            add(name)
        elseif c:match("%d") then
            local num = text:match("^%d+", i)
            i = i + #num
            if text:sub(i, i):match("[%a_]") then
                fail(op, pattern, ("axis name %s starts with a digit: names start with a " ..
                    "letter or _"):format(text:match("^[%w_]+", i - #num)))
            end
            local v = tonumber(num)
            if v == 1 then
                if not cur then
                    groups[#groups + 1] = {} -- a unit axis
                end
            elseif v == 0 then
                fail(op, pattern, "an anonymous axis of length 0: use 1 for a unit axis")
            else
                anon.k = anon.k + 1
                local name = ("#%d_%d"):format(anon.k, v)
                anon.sizes[name] = v
                add(name)
            end
        else
            fail(op, pattern, ("unexpected character '%s' on the %s side: a pattern has " ..
                "axis names, numbers, ( ), ... and one ->"):format(c, side))
        end
    end
    if cur then
        fail(op, pattern,
            ("a ( on the %s side is not closed: balance the parentheses"):format(side))
    end
    return res
end

local parsed_cache, parsed_count = {}, 0

local function parse(op, pattern)
    if type(pattern) ~= "string" then
        raise(("tide: einops.%s: expected the pattern to be a string such as " ..
            "\"b c h w -> b (c h w)\", got %s"):format(op, type(pattern)))
    end
    local key = op .. "\0" .. pattern
    local p = parsed_cache[key]
    if p then
        return p
    end
    M._stats.parses = M._stats.parses + 1
    local a, b = pattern:find("->", 1, true)
    if not a or pattern:find("->", b + 1, true) then
        fail(op, pattern, "a pattern has exactly one -> between the input axes and the output " ..
            "axes, e.g. \"b c h w -> b (c h w)\"")
    end
    local anon = { k = 0, sizes = {} }
    local lhs = parse_side(op, pattern, pattern:sub(1, a - 1), "left", anon)
    local rhs = parse_side(op, pattern, pattern:sub(b + 1), "right", anon)
    for name in pairs(anon.sizes) do
        local on_left = false
        for _, g in ipairs(lhs.groups) do
            for _, ax in ipairs(g) do
                on_left = on_left or ax == name
            end
        end
        -- einops: an anonymous axis is its own identifier, so it is reduced on the left of reduce
        -- ("b (h 2) -> b h") and new on the right of repeat ("h -> (h 2)"); elsewhere refused
        if (on_left and op ~= "reduce") or (not on_left and op ~= "repeat") then
            local v = name:match("_(%d+)$")
            fail(op, pattern, ("the anonymous axis %s on the %s side: %s only 1 is allowed " ..
                "there; name the axis and give its size, e.g. (h h%s) with {h%s = %s}"):format(v,
                on_left and "left" or "right", on_left and "(only reduce drops such an axis)" or
                "(only repeat_ makes such an axis)", v, v, v))
        end
    end
    if lhs.ellipsis_in_group then
        fail(op, pattern, "... inside parentheses on the left side: it is allowed only on the " ..
            "right, e.g. \"b ... -> b (...)\"")
    end
    if rhs.ellipsis and not lhs.ellipsis then
        fail(op, pattern, "... is on the right side only: put ... on the left side too")
    end
    if lhs.ellipsis and not rhs.ellipsis and op ~= "reduce" then
        fail(op, pattern, "... is on the left side only: put ... on the right side too (only " ..
            "reduce drops the dims ... stands for)")
    end
    -- identifiers on each side
    local left, right = {}, {}
    for _, g in ipairs(lhs.groups) do
        for _, ax in ipairs(g) do
            left[ax] = true
        end
    end
    for _, g in ipairs(rhs.groups) do
        for _, ax in ipairs(g) do
            right[ax] = true
        end
    end
    local function sorted_names(set)
        local out = {}
        for k in pairs(set) do
            if k ~= "..." and not k:match("^#") then
                out[#out + 1] = k
            end
        end
        table.sort(out)
        return out
    end
    local left_only, right_only = {}, {}
    for k in pairs(left) do
        if not right[k] then
            left_only[k] = true
        end
    end
    for k in pairs(right) do
        if not left[k] then
            right_only[k] = true
        end
    end
    left_only, right_only = sorted_names(left_only), sorted_names(right_only)
    if op == "rearrange" then
        if #left_only > 0 then
            fail(op, pattern, ("axis %s is on the left side only: name it on the right too " ..
                "(rearrange keeps every element), or use einops.reduce(x, pattern, \"sum\") " ..
                "to reduce it"):format(table.concat(left_only, ", ")))
        end
        if #right_only > 0 then
            fail(op, pattern, ("axis %s is on the right side only: rearrange makes no new axes; " ..
                "use einops.repeat_(x, pattern, {%s = size})")
                :format(table.concat(right_only, ", "), right_only[1]))
        end
    elseif op == "reduce" then
        if #right_only > 0 then
            fail(op, pattern, ("axis %s is on the right side only: reduce makes no new axes; " ..
                "use einops.repeat_ for that"):format(table.concat(right_only, ", ")))
        end
    else
        if #left_only > 0 then
            fail(op, pattern, ("axis %s is on the left side only: repeat_ keeps every input " ..
                "axis; name it on the right too, or use einops.reduce")
                :format(table.concat(left_only, ", ")))
        end
    end
    p = { lhs = lhs, rhs = rhs, anon = anon.sizes, new_axes = right_only, recipes = {} }
    -- patterns built on the fly: keep the cache bounded, as einops' lru_cache
    if parsed_count >= 256 then
        parsed_cache, parsed_count = {}, 0
    end
    parsed_cache[key], parsed_count = p, parsed_count + 1
    return p
end

---------------------------------------------------------------------------------------------
-- recipe: the parsed pattern with ... expanded for an input rank and the given sizes
---------------------------------------------------------------------------------------------
local function recipe(op, pattern, p, rank, sizes)
    local skey = { tostring(rank) }
    local names = {}
    if sizes ~= nil then
        if type(sizes) ~= "table" then
            fail(op, pattern,
                ("expected the sizes as a table such as {h = 2}, got %s"):format(type(sizes)))
        end
        for k, v in pairs(sizes) do
            if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then
                fail(op, pattern, ("sizes has the key %s, which is no axis name: give sizes by " ..
                    "name, {h = 2}"):format(tostring(k)))
            end
            if not is_int(v) or v < 1 then
                fail(op, pattern,
                    ("the size %s = %s is not a positive integer"):format(k, tostring(v)))
            end
            names[#names + 1] = k
        end
        table.sort(names)
        for _, k in ipairs(names) do
            skey[#skey + 1] = k .. "=" .. string.format("%d", sizes[k])
        end
    end
    local key = table.concat(skey, ",")
    local r = p.recipes[key]
    if r then
        return r
    end
    M._stats.recipes = M._stats.recipes + 1
    local lhs, rhs = p.lhs, p.rhs
    local named = #lhs.groups - (lhs.ellipsis and 1 or 0)
    local nell = 0
    if lhs.ellipsis then
        if rank < named then
            fail(op, pattern, ("the input is %d-D but the left side names %d dims besides ...: " ..
                "give an input with at least %d dims"):format(rank, named, named))
        end
        nell = rank - named
    elseif rank ~= named then
        fail(op, pattern, ("the input is %d-D but the left side names %d dims: give one name or " ..
            "group per dim, or ... for the rest"):format(rank, named))
    end
    -- a bare ... on the left is its own entry in groups; on the right it may sit in a group
    local function expand(groups)
        local out = {}
        for _, g in ipairs(groups) do
            local has = false
            for _, ax in ipairs(g) do
                has = has or ax == "..."
            end
            if not has then
                out[#out + 1] = g
            elseif g.bare then
                for e = 1, nell do
                    out[#out + 1] = { "..." .. e }
                end
            else
                local ng = {}
                for _, ax in ipairs(g) do
                    if ax == "..." then
                        for e = 1, nell do
                            ng[#ng + 1] = "..." .. e
                        end
                    else
                        ng[#ng + 1] = ax
                    end
                end
                out[#out + 1] = ng
            end
        end
        return out
    end
    local lgroups, rgroups = expand(lhs.groups), expand(rhs.groups)
    local known = {}
    for k, v in pairs(p.anon) do
        known[k] = v
    end
    local used = {}
    for _, g in ipairs(lgroups) do
        for _, ax in ipairs(g) do
            used[ax] = true
        end
    end
    for _, g in ipairs(rgroups) do
        for _, ax in ipairs(g) do
            used[ax] = true
        end
    end
    for _, k in ipairs(names) do
        if not used[k] then
            fail(op, pattern, ("the size %s = %d names no axis of the pattern: remove it from " ..
                "the sizes"):format(k, sizes[k]))
        end
        known[k] = math.floor(sizes[k])
    end
    for _, ax in ipairs(p.new_axes) do
        if not known[ax] then
            fail(op, pattern, ("the new axis %s on the right has no size: give it, " ..
                "einops.repeat_(x, pattern, {%s = 3})"):format(ax, ax))
        end
    end
    local laxes = {}
    for _, g in ipairs(lgroups) do
        for _, ax in ipairs(g) do
            laxes[#laxes + 1] = ax
        end
    end
    r = { lgroups = lgroups, rgroups = rgroups, laxes = laxes, known = known, plans = {},
        nplans = 0 }
    p.recipes[key] = r
    return r
end

---------------------------------------------------------------------------------------------
-- plan: the shapes and dims of the reshape -> reduce -> permute -> expand -> reshape chain
---------------------------------------------------------------------------------------------
local function plan(op, pattern, r, shape)
    local key = table.concat(shape, ",")
    local pl = r.plans[key]
    if pl then
        return pl
    end
    M._stats.plans = M._stats.plans + 1
    local len = {}
    for k, v in pairs(r.known) do
        len[k] = v
    end
    for d, g in ipairs(r.lgroups) do
        local n = shape[d]
        if #g == 0 then
            if n ~= 1 then
                fail(op, pattern, ("dim %d has length %d, but the pattern has a unit axis " ..
                    "(1 or ()) there: a unit axis must have length 1"):format(d, n))
            end
        else
            local prod, unknown = 1, {}
            for _, ax in ipairs(g) do
                if len[ax] then
                    prod = prod * len[ax]
                else
                    unknown[#unknown + 1] = ax
                end
            end
            local what = #g == 1 and ("axis " .. group_str(g):sub(2, -2)) or
                ("axis group " .. group_str(g))
            if #unknown == 0 then
                if prod ~= n then
                    if #g == 1 then
                        fail(op, pattern, ("axis %s has length %d in the input (dim %d), but " ..
                            "the sizes give %s = %d"):format(g[1], n, d, g[1], prod))
                    end
                    fail(op, pattern, ("%s has length %d in the input (dim %d), but its sizes " ..
                        "multiply to %d: give sizes whose product is %d")
                        :format(what, n, d, prod, n))
                end
            elseif #unknown == 1 then
                if n % prod ~= 0 then
                    fail(op, pattern, ("%s has length %d in the input (dim %d), which the known " ..
                        "sizes (product %d) do not divide: give sizes that divide %d")
                        :format(what, n, d, prod, n))
                end
                len[unknown[1]] = math.floor(n / prod)
            else
                fail(op, pattern, ("cannot infer the sizes of %s in %s from its length %d: give " ..
                    "all but one by name, e.g. {%s = ...}"):format(table.concat(unknown, " and "),
                    group_str(g), n, unknown[1]))
            end
        end
    end
    pl = {}
    -- 1. split the input dims into elementary axes
    local ishape, need_init = {}, #r.laxes ~= #shape
    for i, ax in ipairs(r.laxes) do
        ishape[i] = len[ax]
        need_init = need_init or ishape[i] ~= shape[i]
    end
    if need_init then
        pl.init = ishape
    end
    -- 2. reduce the axes the right side drops
    local inright = {}
    for _, g in ipairs(r.rgroups) do
        for _, ax in ipairs(g) do
            inright[ax] = true
        end
    end
    local reduced, kept = {}, {}
    for i, ax in ipairs(r.laxes) do
        if inright[ax] then
            kept[#kept + 1] = ax
        else
            reduced[#reduced + 1] = i
        end
    end
    if #reduced > 0 then
        pl.reduce = reduced
    end
    -- 3. permute the kept axes into the right side's order
    local pos = {}
    for i, ax in ipairs(kept) do
        pos[ax] = i
    end
    local perm, ident, order = {}, true, {}
    for _, g in ipairs(r.rgroups) do
        for _, ax in ipairs(g) do
            if pos[ax] then
                perm[#perm + 1] = pos[ax]
                ident = ident and pos[ax] == #perm
            end
            order[#order + 1] = ax
        end
    end
    if not ident then
        pl.perm = perm
    end
    -- 4. new axes (repeat_): a 1 where each goes, then expand
    if #order > #kept then
        local view, full = {}, {}
        for i, ax in ipairs(order) do
            full[i] = len[ax]
            view[i] = pos[ax] and len[ax] or 1
        end
        pl.view, pl.expand = view, full
    end
    -- 5. compose the right side's groups
    local fshape, need_final = {}, #r.rgroups ~= #order
    for i, g in ipairs(r.rgroups) do
        local m = 1
        for _, ax in ipairs(g) do
            m = m * len[ax]
        end
        fshape[i] = m
        need_final = need_final or #g ~= 1
    end
    if need_final then
        pl.final = fshape
    end
    if r.nplans >= 64 then -- many shapes through one pattern: keep the cache bounded
        r.plans, r.nplans = {}, 0
    end
    r.plans[key], r.nplans = pl, r.nplans + 1
    return pl
end

local function reduce_dims(x, dims, reduction)
    if type(reduction) == "function" then
        return reduction(x, dims)
    end
    if reduction == "sum" then
        return x:sum({ dim = dims })
    elseif reduction == "mean" then
        return x:mean({ dim = dims })
    elseif reduction == "max" then
        return x:amax({ dim = dims })
    elseif reduction == "min" then
        return x:amin({ dim = dims })
    else -- prod: one dim at a time, from the last
        for i = #dims, 1, -1 do
            x = x:prod({ dim = dims[i] })
        end
        return x
    end
end

local function apply(op, x, pattern, reduction, sizes)
    local p = parse(op, pattern)
    if type(x) == "table" and not is_tensor(x) then
        if #x == 0 then
            fail(op, pattern,
                "the input is an empty list: give a tensor or a list of tensors to stack")
        end
        for i = 1, #x do
            if not is_tensor(x[i]) then
                fail(op, pattern,
                    ("the input list's item %d is a %s, not a tensor"):format(i, type(x[i])))
            end
        end
        local tide = package.loaded["tide"] or require("tide")
        x = tide.stack(x, { dim = 1 })
    elseif not is_tensor(x) then
        fail(op, pattern, ("expected a tensor (or a list of tensors), got %s"):format(type(x)))
    end
    local shape = x.shape
    local r = recipe(op, pattern, p, #shape, sizes)
    local pl = plan(op, pattern, r, shape)
    if pl.init then
        x = x:reshape(pl.init)
    end
    if pl.reduce then
        x = reduce_dims(x, pl.reduce, reduction)
    end
    if pl.perm then
        x = x:permute(pl.perm)
    end
    if pl.view then
        x = x:reshape(pl.view):expand(pl.expand)
    end
    if pl.final then
        x = x:reshape(pl.final)
    end
    return x
end

local function check_reduction(pattern, reduction)
    if type(reduction) ~= "function" and not REDUCTIONS[reduction] then
        parse("reduce", pattern)
        fail("reduce", pattern, ("unknown reduction %s: use \"mean\", \"sum\", \"max\", " ..
            "\"min\", \"prod\" or a function(x, dims)"):format(type(reduction) == "string" and
            ('"' .. reduction .. '"') or tostring(reduction)))
    end
end

--- einops.rearrange(x, pattern[, sizes]): reorder, split and merge axes
function M.rearrange(x, pattern, sizes)
    return apply("rearrange", x, pattern, nil, sizes)
end

--- einops.reduce(x, pattern, reduction[, sizes]): reduction "mean", "sum", "max", "min", "prod"
--- or a function(x, dims) over the (1-based) dims to drop; reduction may also be a key of sizes
function M.reduce(x, pattern, reduction, sizes)
    if type(reduction) == "table" and sizes == nil then
        local s = {}
        for k, v in pairs(reduction) do
            if k ~= "reduction" then
                s[k] = v
            end
        end
        reduction, sizes = reduction.reduction, s
    end
    check_reduction(pattern, reduction)
    return apply("reduce", x, pattern, reduction, sizes)
end

--- einops.repeat_(x, pattern[, sizes]) (also einops["repeat"]): new axes on the right
function M.repeat_(x, pattern, sizes)
    return apply("repeat", x, pattern, nil, sizes)
end
M["repeat"] = M.repeat_

--- einops.parse_shape(x, pattern): {name = length} for the named axes ("_" skips a dim)
function M.parse_shape(x, pattern)
    if not is_tensor(x) then
        raise(("tide: einops.parse_shape: expected a tensor, got %s"):format(type(x)))
    end
    local shape, names = x.shape, {}
    for w in tostring(pattern):gmatch("%S+") do
        names[#names + 1] = w
    end
    if #names ~= #shape then
        raise(('tide: einops.parse_shape(x, "%s"): the input is %d-D but the pattern names %d dims')
            :format(pattern, #shape, #names))
    end
    local out = {}
    for i, w in ipairs(names) do
        if w ~= "_" then
            out[w] = shape[i]
        end
    end
    return out
end

---------------------------------------------------------------------------------------------
-- pack / unpack: einops.pack(tensors, "b * d") -> packed, ps; einops.unpack(packed, ps, "b * d")
---------------------------------------------------------------------------------------------
local function star_pattern(op, pattern)
    if type(pattern) ~= "string" then
        raise(("tide: einops.%s: expected the pattern to be a string such as \"b * d\", got %s")
            :format(op, type(pattern)))
    end
    local words, star = {}, nil
    for w in pattern:gmatch("%S+") do
        words[#words + 1] = w
        if w == "*" then
            if star then
                fail(op, pattern, "* appears twice: a pack pattern has exactly one *")
            end
            star = #words
        elseif not w:match("^[%a_][%w_]*$") then
            fail(op, pattern, ("'%s' is no axis name: a pack pattern is axis names and one *, " ..
                "e.g. \"b * d\""):format(w))
        end
    end
    if not star then
        fail(op, pattern, "no * in the pattern: mark the dims to pack with one *, e.g. \"b * d\"")
    end
    return star - 1, #words - star
end

local function prod(list, from, to)
    local m = 1
    for i = from, to do
        m = m * list[i]
    end
    return m
end

--- einops.pack(tensors, pattern) -> packed, ps: the dims * stands for in each tensor are
--- flattened and the tensors are concatenated along that dim; ps lists each one's * shape
function M.pack(tensors, pattern)
    local nb, na = star_pattern("pack", pattern)
    if type(tensors) ~= "table" or is_tensor(tensors) or #tensors == 0 then
        fail("pack", pattern,
            "expected a non-empty list of tensors, e.g. einops.pack({cls, x}, \"b * d\")")
    end
    local flat, ps = {}, {}
    for i, t in ipairs(tensors) do
        if not is_tensor(t) then
            fail("pack", pattern, ("the list's item %d is a %s, not a tensor"):format(i, type(t)))
        end
        local shape = t.shape
        local n = #shape
        if n < nb + na then
            fail("pack", pattern, ("tensor %d is %d-D but the pattern names %d dims besides *: " ..
                "give it at least %d dims"):format(i, n, nb + na, nb + na))
        end
        local star, new = {}, {}
        for d = nb + 1, n - na do
            star[#star + 1] = shape[d]
        end
        for d = 1, nb do
            new[#new + 1] = shape[d]
        end
        new[#new + 1] = prod(shape, nb + 1, n - na)
        for d = n - na + 1, n do
            new[#new + 1] = shape[d]
        end
        ps[i] = star
        flat[i] = t:reshape(new)
    end
    local tide = package.loaded["tide"] or require("tide")
    return tide.cat(flat, { dim = nb + 1 }), ps
end

--- einops.unpack(packed, ps, pattern) -> list of tensors: pack's inverse (one ps entry may hold -1)
function M.unpack(x, ps, pattern)
    local nb, na = star_pattern("unpack", pattern)
    if not is_tensor(x) then
        fail("unpack", pattern, ("expected a tensor, got %s"):format(type(x)))
    end
    if type(ps) ~= "table" or #ps == 0 then
        fail("unpack", pattern, "expected ps as a list of shapes, the second result of einops.pack")
    end
    local shape = x.shape
    if #shape ~= nb + na + 1 then
        fail("unpack", pattern, ("the input is %d-D but the pattern names %d dims: one per name " ..
            "and one for *"):format(#shape, nb + na + 1))
    end
    local total, sizes, unknown, known = shape[nb + 1], {}, nil, 0
    for i, s in ipairs(ps) do
        if type(s) ~= "table" then
            fail("unpack", pattern, ("ps[%d] is a %s: each entry is a shape list such as {2, 3}")
                :format(i, type(s)))
        end
        local m, neg = 1, false
        for _, v in ipairs(s) do
            if v == -1 then
                if neg or unknown then
                    fail("unpack", pattern,
                        "ps has more than one -1: at most one length can be inferred")
                end
                neg = true
            else
                m = m * v
            end
        end
        if neg then
            unknown = i
        else
            known = known + m
        end
        sizes[i] = m
    end
    local shapes = {}
    for i, s in ipairs(ps) do
        shapes[i] = s
    end
    if unknown then
        local rest = total - known
        local m = sizes[unknown]
        if rest < 0 or m == 0 or rest % m ~= 0 then
            fail("unpack", pattern, ("dim %d has length %d, which ps cannot fill: the known " ..
                "shapes take %d"):format(nb + 1, total, known))
        end
        local s = {}
        for j, v in ipairs(ps[unknown]) do
            s[j] = v == -1 and math.floor(rest / m) or v
        end
        shapes[unknown], sizes[unknown] = s, rest
    elseif known ~= total then
        fail("unpack", pattern, ("dim %d has length %d but the shapes in ps hold %d elements " ..
            "there: give the ps that einops.pack returned"):format(nb + 1, total, known))
    end
    local out, start = {}, 1
    for i, s in ipairs(shapes) do
        local piece = x:narrow(nb + 1, start, sizes[i])
        start = start + sizes[i]
        local new = {}
        for d = 1, nb do
            new[#new + 1] = shape[d]
        end
        for _, v in ipairs(s) do
            new[#new + 1] = v
        end
        for d = nb + 2, #shape do
            new[#new + 1] = shape[d]
        end
        out[i] = piece:reshape(new)
    end
    return out
end

---------------------------------------------------------------------------------------------
-- einsum with einops' multi-letter axis names: einops.einsum(q, k, "b h i d, b h j d -> b h i j")
---------------------------------------------------------------------------------------------
local LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
local einsum_cache = {}

function M.einsum(...)
    local n = select("#", ...)
    local all = { ... }
    local pattern
    if type(all[n]) == "string" then
        pattern = table.remove(all, n)
    elseif type(all[1]) == "string" then -- einops' old order: einsum(pattern, *tensors)
        pattern = table.remove(all, 1)
    else
        raise("tide: einops.einsum: expected the pattern last, einops.einsum(q, k, " ..
            "\"b i d, b j d -> b i j\")")
    end
    local eq = einsum_cache[pattern]
    if not eq then
        if not pattern:find("->", 1, true) then
            fail("einsum", pattern,
                "einops.einsum needs the output after ->, e.g. \"b i d, b j d -> b i j\"")
        end
        local map, k = {}, 0
        eq = pattern:gsub("%.%.%.", "\1"):gsub("[%a_][%w_]*", function(name)
            if not map[name] then
                k = k + 1
                if k > #LETTERS then
                    fail("einsum", pattern, "more than 52 axis names")
                end
                map[name] = LETTERS:sub(k, k)
            end
            return map[name]
        end):gsub("%s+", ""):gsub("\1", "...")
        einsum_cache[pattern] = eq
    end
    for i = 1, #all do
        if not is_tensor(all[i]) then
            fail("einsum", pattern, ("argument %d is a %s, not a tensor"):format(i, type(all[i])))
        end
    end
    local tide = package.loaded["tide"] or require("tide")
    return tide.einsum(eq, unpack(all))
end

---------------------------------------------------------------------------------------------
-- layers: einops.layers.torch's Rearrange and Reduce as nn modules
---------------------------------------------------------------------------------------------
local layers = {}
M.layers = layers

local function sizes_repr(sizes)
    local names, parts = {}, {}
    for k in pairs(sizes or {}) do
        names[#names + 1] = k
    end
    table.sort(names)
    for _, k in ipairs(names) do
        parts[#parts + 1] = ", " .. k .. "=" .. string.format("%d", sizes[k])
    end
    return table.concat(parts)
end

local function copy(t)
    local c = {}
    for k, v in pairs(t or {}) do
        c[k] = v
    end
    return c
end

setmetatable(layers, {
    __index = function(t, name)
        local Module = require("tide.nn.Module")
        if name == "Rearrange" then
            local Rearrange = Module:extend("Rearrange")
            function Rearrange:init(pattern, sizes)
                parse("rearrange", pattern)
                self.pattern, self.axes_lengths = pattern, copy(sizes)
            end
            function Rearrange:forward(x)
                return apply("rearrange", x, self.pattern, nil, self.axes_lengths)
            end
            function Rearrange:extra_repr()
                return '"' .. self.pattern .. '"' .. sizes_repr(self.axes_lengths)
            end
            rawset(t, name, Rearrange)
            return Rearrange
        elseif name == "Reduce" then
            local Reduce = Module:extend("Reduce")
            function Reduce:init(pattern, reduction, sizes)
                if type(reduction) == "table" and sizes == nil then
                    sizes = copy(reduction)
                    reduction, sizes.reduction = sizes.reduction, nil
                end
                parse("reduce", pattern)
                check_reduction(pattern, reduction)
                self.pattern, self.reduction, self.axes_lengths = pattern, reduction, copy(sizes)
            end
            function Reduce:forward(x)
                return apply("reduce", x, self.pattern, self.reduction, self.axes_lengths)
            end
            function Reduce:extra_repr()
                return '"' .. self.pattern .. '", "' .. tostring(self.reduction) .. '"' ..
                    sizes_repr(self.axes_lengths)
            end
            rawset(t, name, Reduce)
            return Reduce
        end
        return nil
    end,
})

return M
