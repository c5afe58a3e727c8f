-- Spatial transforms for tide.nn.functional, as PyTorch 1.13 computes them: affine_grid (the
-- sampling grid of an affine map) and grid_sample (an image read at a grid's points, bilinear,
-- nearest or bicubic, with zeros, border or reflection padding), the pair a spatial transformer
-- network is made of. 4-D inputs (images) and 5-D (volumes). Written with gather and elementwise
-- ops: autograd gives the gradients to the input, the grid and theta, PyTorch's formulas.
-- Required from the end of functional.lua; its argument checks are tide.nn._args (C).
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local unpack = require("tide._compat").unpack

local C = require("tide.nn._args")

-- a pixel coordinate from the grid's [-1, 1] along a side of `size` pixels: the corners'
-- centres at -1 and 1 with align_corners, the outer edges otherwise
local function unnormalize(g, size, align)
    if align then
        return g:add(1):mul((size - 1) / 2)
    end
    return g:add(1):mul(size):sub(1):div(2)
end

-- coordinates reflected into the span [low, high] (in half pixels, PyTorch's reflect_coordinates)
local function reflect(x, twice_low, twice_high)
    if twice_low == twice_high then
        return x:mul(0)
    end
    local min, span = twice_low / 2, (twice_high - twice_low) / 2
    local d = x:sub(min):abs()
    local extra = d:fmod(span)
    local flips = d:div(span):floor():detach()
    local even = flips:remainder(2):eq(0)
    return core.where(even, extra:add(min), extra:neg():add(span + min))
end

-- the padding mode applied to a pixel coordinate along a side of `size`
local function pad_coordinate(x, size, mode, align)
    if mode == "border" then
        return x:clamp(0, size - 1)
    elseif mode == "reflection" then
        if align then
            x = reflect(x, 0, 2 * (size - 1))
        else
            x = reflect(x, -1, 2 * size - 1)
        end
        return x:clamp(0, size - 1)
    end
    return x
end

return function(F)
    local tensor_arg, options, bool_opt = C.tensor_arg, C.options, C.bool_opt
    local shape_str, same_device = C.shape_str, C.same_device

    -- affine_grid(theta [N, 2, 3], size {N, C, H, W}[, {align_corners = false}]): the grid
    -- [N, H, W, 2] of the points theta maps the output's pixel centres to, x first; theta
    -- [N, 3, 4] and size {N, C, D, H, W} give [N, D, H, W, 3] (x, y, z), as PyTorch's
    function F.affine_grid(theta, size, opts)
        local who = "affine_grid"
        tensor_arg(theta, who, "theta")
        local o = options(opts, who, { "align_corners" })
        local align = bool_opt(o.align_corners, false, who, "align_corners")
        if type(size) ~= "table" or (#size ~= 4 and #size ~= 5) then
            raise("tide: affine_grid: size must be the output's {N, C, H, W} or " ..
                "{N, C, D, H, W}, got " ..
                (type(size) == "table" and ("a list of " .. #size) or type(size)))
        end
        for i = 1, #size do
            local v = size[i]
            if type(v) ~= "number" or v ~= math.floor(v) or v < 0 then
                raise(("tide: affine_grid: size must be the output's {N, C, H, W} or " ..
                    "{N, C, D, H, W} as sizes >= 0; size[%d] is %s"):format(i,
                    type(v) == "number" and tostring(v) or require("tide.op_args").typename(v)))
            end
        end
        local k = #size - 2 -- spatial dims
        local n = size[1]
        if theta:dim() ~= 3 or theta:size(1) ~= n or theta:size(2) ~= k or
            theta:size(3) ~= k + 1 then
            raise(string.format("tide: affine_grid: expected theta {%d, %d, %d} for size {%s}, " ..
                "got %s", n, k, k + 1, table.concat(size, ", "), shape_str(theta)))
        end
        if not C.FLOAT_DTYPES[theta.dtype] then
            raise("tide: affine_grid: expected a floating-point theta, got " .. theta.dtype)
        end
        local opt = { dtype = theta.dtype, device = theta.device }
        local function axis(m)
            if m == 1 then
                return core.zeros({ 1 }, opt)
            end
            local i = core.arange(0, m, opt)
            if align then
                return i:mul(2 / (m - 1)):sub(1)
            end
            return i:mul(2):add(1):div(m):sub(1)
        end
        local sp, cells = {}, 1 -- the spatial sizes, D H W (or H W)
        for i = 1, k do
            sp[i], cells = size[2 + i], cells * size[2 + i]
        end
        local cols = {} -- x (the last dim) first, then y (, z), then ones
        for c = 1, k do
            local d = k - c + 1 -- the spatial dim coordinate c runs along
            local view = {}
            for i = 1, k do
                view[i] = i == d and sp[i] or 1
            end
            cols[c] = axis(sp[d]):view(view):expand(sp)
        end
        cols[k + 1] = core.ones(sp, opt)
        local base = core.stack(cols, k + 1):reshape(cells, k + 1) -- [cells, k + 1]
        local out_shape = { n }
        for i = 1, k do
            out_shape[1 + i] = sp[i]
        end
        out_shape[k + 2] = k
        return base:matmul(theta:transpose(2, 3)):view(out_shape)
    end

    -- grid_sample(input [N, C, H, W], grid [N, Ho, Wo, 2][, {mode = "bilinear", padding_mode =
    -- "zeros", align_corners = false}]): [N, C, Ho, Wo], input read at the grid's points (x, y
    -- in [-1, 1]); outside, zeros (0), border (the nearest edge pixel) or reflection. A volume
    -- [N, C, D, H, W] with grid [N, Do, Ho, Wo, 3] (x, y, z) gives [N, C, Do, Ho, Wo]
    -- (bilinear is then trilinear; bicubic is for 4-D only, as PyTorch's)
    function F.grid_sample(input, grid, opts)
        local who = "grid_sample"
        tensor_arg(input, who, "input")
        tensor_arg(grid, who, "grid")
        local o = options(opts, who, { "mode", "padding_mode", "align_corners" })
        local mode, pmode = o.mode or "bilinear", o.padding_mode or "zeros"
        if mode ~= "bilinear" and mode ~= "nearest" and mode ~= "bicubic" then
            raise('tide: grid_sample: mode must be "bilinear", "nearest" or "bicubic", got ' ..
                tostring(mode))
        end
        if pmode ~= "zeros" and pmode ~= "border" and pmode ~= "reflection" then
            raise('tide: grid_sample: padding_mode must be "zeros", "border" or "reflection", ' ..
                "got " .. tostring(pmode))
        end
        local align = bool_opt(o.align_corners, false, who, "align_corners")
        local nd = input:dim()
        if (nd ~= 4 and nd ~= 5) or grid:dim() ~= nd or grid:size(nd) ~= nd - 2 or
            grid:size(1) ~= input:size(1) then
            raise(string.format("tide: grid_sample: expected input {N, C, H, W} and grid " ..
                "{N, Ho, Wo, 2} with the same N, got %s and %s (or input {N, C, D, H, W} and " ..
                "grid {N, Do, Ho, Wo, 3})", shape_str(input), shape_str(grid)))
        end
        if mode == "bicubic" and nd == 5 then
            raise("tide: grid_sample: bicubic interpolation only supports 4-D input, got " ..
                shape_str(input))
        end
        same_device(input, grid, who, "grid")
        if not C.FLOAT_DTYPES[input.dtype] or grid.dtype ~= input.dtype then
            raise(string.format("tide: grid_sample: expected floating-point input and grid of " ..
                "one dtype, got %s and %s", input.dtype, grid.dtype))
        end
        local k = nd - 2
        local n, c = input:size(1), input:size(2)
        -- sizes[j]: the input's size along grid coordinate j (x: the last dim)
        local sizes, cells, out_sp, npts = {}, 1, {}, 1
        for j = 1, k do
            sizes[j] = input:size(nd - j + 1)
            cells = cells * sizes[j]
            out_sp[j] = grid:size(1 + j)
            npts = npts * out_sp[j]
        end
        local function coord(j)
            return unnormalize(grid:select(nd, j), sizes[j], align)
        end
        local flat = input:reshape(n, c, cells)
        local out_shape = { n, c, unpack(out_sp) }
        local mask_shape = { n, 1, unpack(out_sp) }
        -- input at integer cells pts (one per coordinate) [N, C, ...], and 1 where inside
        local function at(pts)
            local inside, idx
            for j = k, 1, -1 do
                local p, s = pts[j], sizes[j]
                local ok = p:ge(0):logical_and(p:le(s - 1))
                inside = inside and inside:logical_and(ok) or ok
                local pc = p:clamp(0, s - 1)
                idx = idx and idx:mul(s):add(pc) or pc
            end
            idx = idx:add(1):to("int64")
            local v = flat:gather(3, idx:reshape(n, 1, npts):expand(n, c, npts))
            return v:reshape(out_shape), inside:to(input.dtype):reshape(mask_shape)
        end
        if mode == "bicubic" then -- PyTorch's: the 4 x 4 cells around the unpadded point,
            -- each cell's coordinates padded, Keys' cubic convolution (A = -0.75) weights
            local w, h = sizes[1], sizes[2]
            local ux, uy = coord(1), coord(2)
            local bx, by = ux:floor():detach(), uy:floor():detach()
            local A = -0.75
            local function coeffs(t)
                local function near(v) -- |v| <= 1
                    return v:mul(A + 2):sub(A + 3):mul(v):mul(v):add(1)
                end
                local function far(v) -- 1 < |v| < 2
                    return v:mul(A):sub(5 * A):mul(v):add(8 * A):mul(v):sub(4 * A)
                end
                return { far(t:add(1)), near(t), near(t:neg():add(1)), far(t:neg():add(2)) }
            end
            local cx, cy = coeffs(ux:sub(bx)), coeffs(uy:sub(by))
            local out
            for j = 1, 4 do
                local yj = pad_coordinate(by:add(j - 2), h, pmode, align)
                local row
                for i = 1, 4 do
                    local v, inside = at({ pad_coordinate(bx:add(i - 2), w, pmode, align), yj })
                    local term = v:mul(inside):mul(cx[i]:unsqueeze(2))
                    row = row and row:add(term) or term
                end
                local term = row:mul(cy[j]:unsqueeze(2))
                out = out and out:add(term) or term
            end
            return out
        end
        local pts = {}
        for j = 1, k do
            pts[j] = pad_coordinate(coord(j), sizes[j], pmode, align)
        end
        if mode == "nearest" then
            local r = {}
            for j = 1, k do
                r[j] = pts[j]:round():detach()
            end
            local v, inside = at(r)
            local out = v:mul(inside)
            if autograd.needs_record(grid) then -- PyTorch's zero gradient for the grid
                local none = core.zeros(grid.shape, { dtype = "bool", device = grid.device })
                out = out:add(core.where(none, grid, 0):sum(nd, true):movedim(nd, 2))
            end
            return out
        end
        -- (tri)linear: the 2^k corners around each point, each weighted by the product of its
        -- 1-d weights
        local lo, w1, w0 = {}, {}, {}
        for j = 1, k do
            lo[j] = pts[j]:floor():detach()
            w1[j] = pts[j]:sub(lo[j])
            w0[j] = w1[j]:neg():add(1)
        end
        local out
        for corner = 0, 2 ^ k - 1 do
            local cp, wt = {}, nil
            for j = 1, k do
                local up = math.floor(corner / 2 ^ (j - 1)) % 2 == 1
                cp[j] = up and lo[j]:add(1) or lo[j]
                local wj = up and w1[j] or w0[j]
                wt = wt and wt:mul(wj) or wj
            end
            local v, inside = at(cp)
            local term = v:mul(wt:unsqueeze(2)):mul(inside)
            out = out and out:add(term) or term
        end
        return out
    end
end
