-- tide.distributions.transforms._util: what the transforms share: the float types' eps and
-- tiny (PyTorch's torch.finfo), _sum_rightmost, the clipped sigmoid, and the lower triangle of
-- a matrix as a vector in row order and back (PyTorch's tril_matrix_to_vec and
-- vec_to_tril_matrix), through index_select so that gradients flow.
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise

local U = {}

-- each float dtype's eps and tiny (torch.finfo's), from tide._dtype_limits
U.EPS, U.TINY = {}, {}
for dtype, l in pairs(require("tide._dtype_limits")) do
    U.EPS[dtype], U.TINY[dtype] = l.eps, l.tiny
end

-- x summed over its last n dims (n <= 0: x itself)
function U.sum_rightmost(x, n)
    if n <= 0 then
        return x
    end
    local shape = x:size()
    local keep = {}
    for i = 1, #shape - n do
        keep[i] = shape[i]
    end
    keep[#keep + 1] = -1
    return x:reshape(keep):sum(-1)
end

-- the sigmoid kept inside (0, 1): [tiny, 1 - eps] of x's dtype
function U.clipped_sigmoid(x)
    return x:sigmoid():clamp(U.TINY[x.dtype], 1 - U.EPS[x.dtype])
end

-- shape without its last k sizes
function U.drop_last(shape, k)
    local out = {}
    for i = 1, #shape - k do
        out[i] = shape[i]
    end
    return out
end

-- a .. b, a new list
function U.concat(a, b)
    local out = {}
    for i = 1, #a do
        out[i] = a[i]
    end
    for i = 1, #b do
        out[#out + 1] = b[i]
    end
    return out
end

function U.same_shape(a, b)
    if #a ~= #b then
        return false
    end
    for i = 1, #a do
        if a[i] ~= b[i] then
            return false
        end
    end
    return true
end

function U.shape_str(s)
    return "{" .. table.concat(s, ", ") .. "}"
end

-- the shapes broadcast together, PyTorch's rules; who names the call in the error
function U.broadcast_shapes(who, ...)
    local out = {}
    local shapes = { ... }
    local n = 0
    for _, s in ipairs(shapes) do
        n = math.max(n, #s)
    end
    for i = 1, n do
        local size = 1
        for _, s in ipairs(shapes) do
            local j = #s - n + i -- (a size table reads s[-1] as its last size: j >= 1 only)
            local v = j >= 1 and s[j] or nil
            if v ~= nil and v ~= 1 then
                if size ~= 1 and size ~= v then
                    local strs = {}
                    for k, t in ipairs(shapes) do
                        strs[k] = U.shape_str(t)
                    end
                    raise(("tide: %s: the shapes %s do not broadcast"):format(who,
                        table.concat(strs, " and ")))
                end
                size = v
            end
        end
        out[i] = size
    end
    return out
end

local function index_tensor(list, like)
    return core.tensor(list, { dtype = "int64", device = like.device })
end

-- the row-order positions (1-based, in the flattened n x n matrix) of the entries (i, j) with
-- j - i <= diag (0-based i, j: PyTorch's mask arange < arange.view(-1, 1) + diag + 1)
local function tril_positions(n, diag)
    local pos = {}
    for i = 0, n - 1 do
        for j = 0, n - 1 do
            if j < i + diag + 1 then
                pos[#pos + 1] = i * n + j + 1
            end
        end
    end
    return pos
end

function U.tril_matrix_to_vec(mat, diag, who)
    local shape = mat:size()
    local n = shape[#shape]
    if diag < -n or diag >= n then
        raise(("tide: %s: diag %d is outside [%d, %d]"):format(who, diag, -n, n - 1))
    end
    local flat = U.drop_last(shape, 2)
    flat[#flat + 1] = n * n
    return mat:reshape(flat):index_select(-1, index_tensor(tril_positions(n, diag), mat))
end

-- the side n of the matrices whose lower triangle (to diag) holds k entries, or nil
function U.tril_side(k, diag)
    local b = 1 + 2 * diag
    local n = (-b + math.sqrt(b * b + 8 * k + 4 * math.abs(diag) * (diag + 1))) / 2
    local r = math.floor(n + 0.5)
    if math.abs(r - n) > 1e-9 then
        return nil
    end
    return r
end

function U.vec_to_tril_matrix(vec, diag, who)
    local shape = vec:size()
    local k = shape[#shape]
    local n = U.tril_side(k, diag)
    if not n then
        raise(("tide: %s: the last dim has %d entries, which is no lower triangle of a square " ..
            "matrix; give D (D - 1) / 2 of them"):format(who, k))
    end
    -- each of the n x n entries from the vector, or from a zero appended at k + 1
    local map = {}
    for p = 1, n * n do
        map[p] = k + 1
    end
    for idx, p in ipairs(tril_positions(n, diag)) do
        map[p] = idx
    end
    local zshape = U.drop_last(shape, 1)
    zshape[#zshape + 1] = 1
    local padded = core.cat({ vec, core.zeros(zshape, { dtype = vec.dtype,
        device = vec.device }) }, -1)
    local out = U.drop_last(shape, 1)
    out[#out + 1] = n
    out[#out + 1] = n
    return padded:index_select(-1, index_tensor(map, vec)):reshape(out)
end

-- x with `before` entries of value v before its last dim and `after` after (F.pad's [b, a])
function U.pad_last(x, before, after, v)
    local parts = {}
    local shape = x:size()
    local function block(k)
        local s = U.drop_last(shape, 1)
        s[#s + 1] = k
        return core.full(s, v, { dtype = x.dtype, device = x.device })
    end
    if before > 0 then
        parts[#parts + 1] = block(before)
    end
    parts[#parts + 1] = x
    if after > 0 then
        parts[#parts + 1] = block(after)
    end
    return core.cat(parts, -1)
end

return U
