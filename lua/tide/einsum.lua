-- tide.einsum(eq, ...): Einstein summation (docs/API.md, "The wider surface") written with
-- views, sum and matmul: repeated letters in one operand take a diagonal (a product with an
-- identity, summed), letters used once are summed out, then the operands are contracted left
-- to right, each pair as one batched matmul. Autograd follows the ops it records. An ellipsis
-- "..." stands for the dims no letter names, aligned from the right and broadcast across the
-- operands as NumPy's: each becomes a label of its own (a control character), and an operand
-- whose size is 1 where another's is larger drops that dim (it takes no part in the sum).
local core = require("tide.core")
local raise = require("tide.autograd.raise")
local args = require("tide.op_args")
local compat = require("tide._compat")
local is_complex = require("tide.complex.tensor").is

local M = { functions = {}, names = { "einsum" } }

local function letters(s)
    local out = {}
    for c in s:gmatch(".") do
        out[#out + 1] = c
    end
    return out
end

local function index_of(list, c)
    for i = 1, #list do
        if list[i] == c then
            return i
        end
    end
end

local function without(list, i)
    local out = {}
    for k = 1, #list do
        if k ~= i then
            out[#out + 1] = list[k]
        end
    end
    return out
end

-- x's repeated letters taken as diagonals: "ii" -> "i"
local function diagonals(x, ls)
    local i = 1
    while i <= #ls do
        local j = index_of(without(ls, i), ls[i])
        if j and j >= i then
            j = j + 1
            local n = x:size(i)
            if x:size(j) ~= n then
                raise(("tide: einsum: subscript %s has sizes %d and %d in one operand"):format(
                    ls[i], n, x:size(j)))
            end
            local shape = {}
            for k = 1, #ls do
                shape[k] = (k == i or k == j) and n or 1
            end
            local eye = core.eye(n, { dtype = x.dtype, device = x.device })
            x = (x * eye:reshape(shape)):sum(j) -- i < j: eye's two dims keep their order
            ls = without(ls, j)
        else
            i = i + 1
        end
    end
    return x, ls
end

-- the letters of `a` that `keep` holds (keep: set)
local function sum_unkept(x, ls, keep)
    for i = #ls, 1, -1 do
        if not keep[ls[i]] then
            x = x:sum(i)
            ls = without(ls, i)
        end
    end
    return x, ls
end

local function product(sizes)
    local p = 1
    for i = 1, #sizes do
        p = p * sizes[i]
    end
    return p
end

-- x permuted so its letters come in `order`, reshaped to the products of the groups
local function grouped(x, ls, groups)
    local perm, shape = {}, {}
    for _, g in ipairs(groups) do
        local sizes = {}
        for _, c in ipairs(g) do
            local i = index_of(ls, c)
            perm[#perm + 1] = i
            sizes[#sizes + 1] = x:size(i)
        end
        shape[#shape + 1] = product(sizes)
    end
    if #perm > 0 then
        x = x:permute(perm)
    end
    return x:reshape(shape)
end

local function contract(a, la, b, lb, keep, size_of)
    local batch, contr, a_only, b_only = {}, {}, {}, {}
    for _, c in ipairs(la) do
        if index_of(lb, c) then
            if keep[c] then batch[#batch + 1] = c else contr[#contr + 1] = c end
        else
            a_only[#a_only + 1] = c
        end
    end
    for _, c in ipairs(lb) do
        if not index_of(la, c) then
            b_only[#b_only + 1] = c
        end
    end
    local am = grouped(a, la, { batch, a_only, contr })
    local bm = grouped(b, lb, { batch, contr, b_only })
    local r = am:matmul(bm)
    local ls, shape = {}, {}
    for _, g in ipairs({ batch, a_only, b_only }) do
        for _, c in ipairs(g) do
            ls[#ls + 1] = c
            shape[#shape + 1] = size_of[c]
        end
    end
    return r:reshape(shape), ls
end

-- PyTorch's sublist form, einsum(a, {0, 1}, b, {1, 2}[, {0, 2}]): each operand followed by its
-- subscripts as integers in [0, 52) (0-25 are 'A'-'Z', 26-51 'a'-'z', as torch's) or "...", then
-- the output's; returns the equation and the operands
local function sublist_label(k, v)
    if v == "..." then
        return "..."
    end
    if type(v) ~= "number" or v ~= math.floor(v) or v < 0 or v >= 52 then
        raise(("tide: einsum: subscript %s in sublist %d is not within the valid range [0, 52) " ..
            "(or \"...\")"):format(tostring(v), k))
    end
    return v < 26 and string.char(65 + v) or string.char(71 + v) -- 71 + 26 = 'a'
end
local function sublist_equation(all)
    local function subscripts(k, list)
        if type(list) ~= "table" or getmetatable(list) ~= nil then
            raise(("tide: einsum: sublist %d must be a list of integers in [0, 52) or \"...\", " ..
                "as tide.einsum(a, {0, 1}, b, {1, 2}, {0, 2}), got %s"):format(k,
                core.is_tensor(list) and "a tensor" or type(list)))
        end
        local out = {}
        for i = 1, #list do
            out[i] = sublist_label(k, list[i])
        end
        return table.concat(out)
    end
    local ops, terms, i = {}, {}, 1
    while i < all.n and (core.is_tensor(all[i]) or is_complex(all[i])) do
        ops[#ops + 1] = all[i]
        terms[#terms + 1] = subscripts(#terms + 1, all[i + 1])
        i = i + 2
    end
    local eq = table.concat(terms, ",")
    if i == all.n then
        eq = eq .. "->" .. subscripts(#terms + 1, all[i])
    elseif i < all.n or #ops == 0 then
        raise("tide: einsum: expected an equation string such as \"ij,jk->ik\", or operands " ..
            "each followed by its sublist, as tide.einsum(a, {0, 1}, b, {1, 2}, {0, 2})")
    end
    return eq, ops
end

function M.functions.einsum(eq, ...)
    if core.is_tensor(eq) or is_complex(eq) then
        local ops
        eq, ops = sublist_equation(compat.pack(eq, ...))
        return M.functions.einsum(eq, compat.unpack(ops))
    end
    if type(eq) ~= "string" then
        raise(("tide: einsum: expected an equation string such as \"ij,jk->ik\", got %s")
            :format(type(eq)))
    end
    local ops = compat.pack(...)
    if ops.n == 1 and type(ops[1]) == "table" and not core.is_tensor(ops[1]) and
        getmetatable(ops[1]) == nil then
        ops = compat.pack(compat.unpack(ops[1]))
    end
    -- a complex operand (a table, lua/tide/complex/tensor.lua): the sum of real einsums
    for k = 1, ops.n do
        if is_complex(ops[k]) then
            return require("tide.complex").einsum(M.functions.einsum, eq, ops)
        end
    end
    local spec = eq:gsub("%s", "")
    local lhs, rhs = spec:match("^(.-)%->(.*)$")
    lhs = lhs or spec
    local function bad_chars()
        raise(("tide: einsum: equation %q has characters other than letters, ',', '...' and " ..
            "'->'"):format(eq))
    end
    -- "..." becomes "*" here, then the dims it covers
    local function starred(part)
        if part:find("*", 1, true) then
            bad_chars()
        end
        local p = part:gsub("%.%.%.", "*")
        if p:find(".", 1, true) then
            raise(("tide: einsum: equation %q has a '.' outside an ellipsis \"...\""):format(eq))
        end
        return p
    end
    lhs, rhs = starred(lhs), rhs and starred(rhs)
    if lhs:find("[^%a,*]") or (rhs and rhs:find("[^%a*]")) then
        bad_chars()
    end
    local terms, has_dots = {}, {}
    for t in (lhs .. ","):gmatch("([^,]*),") do
        local k = #terms + 1
        local _, n = t:gsub("%*", "")
        if n > 1 then
            raise(("tide: einsum: operand %d has more than one ellipsis"):format(k))
        end
        has_dots[k] = n == 1
        terms[k] = letters(t)
    end
    if #terms ~= ops.n then
        raise(("tide: einsum: equation %q has %d operands but %d tensors were given")
            :format(eq, #terms, ops.n))
    end
    -- the ellipsis dims: E labels for the most any operand covers, the sizes broadcast
    local E, dots = 0, {}
    for k = 1, ops.n do
        local x = args.check("einsum", ops[k], k + 1)
        local named = #terms[k] - (has_dots[k] and 1 or 0)
        if has_dots[k] and x:dim() < named then
            raise(("tide: einsum: operand %d has %d subscripts and an ellipsis for a tensor " ..
                "with %d dims"):format(k, named, x:dim()))
        elseif not has_dots[k] and x:dim() ~= named then
            raise(("tide: einsum: operand %d has %d subscripts for a tensor with %d dims")
                :format(k, named, x:dim()))
        end
        dots[k] = x:dim() - named
        E = math.max(E, dots[k])
    end
    local dot_label, dot_size = {}, {}
    for i = 1, E do
        dot_label[i] = string.char(i) -- no letter: never clashes with a subscript
        dot_size[i] = 1
    end
    local function expand(ls, n) -- "*" replaced by the last n of the E labels
        local out = {}
        for _, c in ipairs(ls) do
            if c == "*" then
                for i = E - n + 1, E do
                    out[#out + 1] = dot_label[i]
                end
            else
                out[#out + 1] = c
            end
        end
        return out
    end
    for k = 1, ops.n do
        local x, n = ops[k], dots[k]
        local first = index_of(terms[k], "*")
        for j = 1, n do
            local i, size = E - n + j, x:size(first + j - 1)
            if size ~= 1 and dot_size[i] ~= 1 and size ~= dot_size[i] then
                raise(("tide: einsum: the ellipsis dims of operand %d (%s) do not broadcast " ..
                    "with the other operands' (size %d where another has %d)"):format(k,
                    "{" .. table.concat(x.shape, ", ") .. "}", size, dot_size[i]))
            end
            if size ~= 1 then
                dot_size[i] = size
            end
        end
        terms[k] = expand(terms[k], n)
    end
    -- an operand broadcast along an ellipsis dim (size 1 there, larger elsewhere) drops it
    for k = 1, ops.n do
        local x, ls = ops[k], terms[k]
        for i = #ls, 1, -1 do
            local c = ls[i]
            if c:byte() <= E and dot_size[c:byte()] ~= 1 and x:size(i) == 1 then
                x = x:squeeze(i)
                ls = without(ls, i)
            end
        end
        ops[k], terms[k] = x, ls
    end
    local count, size_of = {}, {}
    for i = 1, E do
        size_of[dot_label[i]] = dot_size[i]
    end
    -- a subscript's sizes across operands broadcast as PyTorch's: size 1 stretches to the
    -- others' size (torch.einsum('ijb,jbd->ibd', a, b) with a's b of size 1); within one
    -- operand (a diagonal, 'ii->i') they must agree
    local stretched = false
    for k = 1, ops.n do
        local x, ls = ops[k], terms[k]
        for i, c in ipairs(ls) do
            count[c] = (count[c] or 0) + 1
            local n = x:size(i)
            for j = 1, i - 1 do
                if ls[j] == c and x:size(j) ~= n then
                    raise(("tide: einsum: subscript %s has sizes %d and %d"):format(c,
                        x:size(j), n))
                end
            end
            local m = size_of[c]
            if m and m ~= n then
                if m ~= 1 and n ~= 1 then
                    raise(("tide: einsum: subscript %s has sizes %d and %d (operands must agree " ..
                        "on a subscript's size, or have size 1 there to broadcast)"):format(c, m,
                        n))
                end
                stretched = true
            end
            if not m or m == 1 then
                size_of[c] = n
            end
        end
    end
    for k = 1, stretched and ops.n or 0 do -- only when an operand has a size-1 subscript to widen
        local x, ls = ops[k], terms[k]
        local sizes, differs = {}, false
        for i, c in ipairs(ls) do
            sizes[i] = size_of[c]
            differs = differs or x:size(i) ~= sizes[i]
        end
        if differs then
            ops[k] = x:expand(sizes)
        end
    end
    local out
    if rhs then
        local _, n = rhs:gsub("%*", "")
        if n > 1 then
            raise(("tide: einsum: the output of %q has more than one ellipsis"):format(eq))
        end
        out = expand(letters(rhs), E)
        for i, c in ipairs(out) do
            if not size_of[c] then
                raise(("tide: einsum: output subscript %s appears in no operand"):format(c))
            end
            if index_of(without(out, i), c) then
                raise(("tide: einsum: output subscript %s appears more than once"):format(c))
            end
        end
    else -- implicit: the ellipsis dims, then the letters used once, in alphabetical order
        out = {}
        for c, n in pairs(count) do
            if n == 1 and c:byte() > E then
                out[#out + 1] = c
            end
        end
        table.sort(out)
        for i = E, 1, -1 do
            table.insert(out, 1, dot_label[i])
        end
    end
    -- the letters a later step needs: the output's and those of the operands after k
    local function keep_after(k)
        local keep = {}
        for _, c in ipairs(out) do
            keep[c] = true
        end
        for j = k + 1, #terms do
            for _, c in ipairs(terms[j]) do
                keep[c] = true
            end
        end
        return keep
    end
    local x, lx = diagonals(ops[1], terms[1])
    for k = 2, ops.n do
        local keep = keep_after(k)
        local keep_x = keep_after(k - 1)
        for _, c in ipairs(terms[k]) do keep_x[c] = true end
        x, lx = sum_unkept(x, lx, keep_x)
        local y, ly = diagonals(ops[k], terms[k])
        local keep_y = keep_after(k)
        for _, c in ipairs(lx) do keep_y[c] = true end
        y, ly = sum_unkept(y, ly, keep_y)
        x, lx = contract(x, lx, y, ly, keep, size_of)
    end
    local final = {}
    for _, c in ipairs(out) do
        final[c] = true
    end
    x, lx = sum_unkept(x, lx, final)
    if #out == 0 then
        return #lx == 0 and x or x:sum()
    end
    local perm = {}
    for i, c in ipairs(out) do
        perm[i] = index_of(lx, c)
    end
    return x:permute(perm)
end

return M
