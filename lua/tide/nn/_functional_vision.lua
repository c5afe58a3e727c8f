-- Spatial transforms for tide.nn.functional, as PyTorch 1.13 computes them: affine_grid (the
-- sampling grid of an affine map) and grid_sample (an image read at a grid's points, bilinear,
-- nearest or bicubic, with zeros, border or reflection padding), the pair a spatial transformer
-- network is made of. 4-D inputs (images). Written with gather and elementwise ops: autograd
-- gives the gradients to the input, the grid and theta, PyTorch's formulas. Required from the
-- end of functional.lua; its argument checks are tide.nn._args (C).
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise

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
    -- [N, H, W, 2] of the points theta maps the output's pixel centres to, x first
    function F.affine_grid(theta, size, opts)
        local who = "affine_grid"
        tensor_arg(theta, who, "theta")
        local o = options(opts, who, { "align_corners" })
        local align = bool_opt(o.align_corners, false, who, "align_corners")
        if type(size) ~= "table" or #size ~= 4 then
            raise("tide: affine_grid: size must be the output's {N, C, H, W}, got " ..
                (type(size) == "table" and ("a list of " .. #size) or type(size)))
        end
        local n, h, w = size[1], size[3], size[4]
        if theta:dim() ~= 3 or theta:size(1) ~= n or theta:size(2) ~= 2 or theta:size(3) ~= 3 then
            raise(string.format("tide: affine_grid: expected theta {%d, 2, 3} for size {%s}, got %s",
                n, table.concat(size, ", "), shape_str(theta)))
        end
        if not C.FLOAT_DTYPES[theta.dtype] then
            raise("tide: affine_grid: expected a floating-point theta, got " .. theta.dtype)
        end
        local function axis(k)
            local opt = { dtype = theta.dtype, device = theta.device }
            if k == 1 then
                return core.zeros({ 1 }, opt)
            end
            local i = core.arange(0, k, opt)
            if align then
                return i:mul(2 / (k - 1)):sub(1)
            end
            return i:mul(2):add(1):div(k):sub(1)
        end
        local xs = axis(w):view(1, w):expand(h, w)
        local ys = axis(h):view(h, 1):expand(h, w)
        local ones = core.ones({ h, w }, { dtype = theta.dtype, device = theta.device })
        local base = core.stack({ xs, ys, ones }, 3):reshape(h * w, 3) -- [H W, 3]
        return base:matmul(theta:transpose(2, 3)):view(n, h, w, 2)
    end

    -- grid_sample(input [N, C, H, W], grid [N, Ho, Wo, 2][, {mode = "bilinear", padding_mode =
    -- "zeros", align_corners = false}]): [N, C, Ho, Wo], input read at the grid's points (x, y
    -- in [-1, 1]); outside, zeros (0), border (the nearest edge pixel) or reflection
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
        if input:dim() ~= 4 or grid:dim() ~= 4 or grid:size(4) ~= 2 or
            grid:size(1) ~= input:size(1) then
            raise(string.format("tide: grid_sample: expected input {N, C, H, W} and grid " ..
                "{N, Ho, Wo, 2} with the same N, got %s and %s", shape_str(input),
                shape_str(grid)))
        end
        same_device(input, grid, who, "grid")
        if not C.FLOAT_DTYPES[input.dtype] or grid.dtype ~= input.dtype then
            raise(string.format("tide: grid_sample: expected floating-point input and grid of " ..
                "one dtype, got %s and %s", input.dtype, grid.dtype))
        end
        local n, c, h, w = input:size(1), input:size(2), input:size(3), input:size(4)
        local ho, wo = grid:size(2), grid:size(3)
        local x = pad_coordinate(unnormalize(grid:select(4, 1), w, align), w, pmode, align)
        local y = pad_coordinate(unnormalize(grid:select(4, 2), h, align), h, pmode, align)
        local flat = input:reshape(n, c, h * w)
        -- input at integer pixels (xi, yi) [N, Ho, Wo], 0 where outside the image
        local function at(xi, yi)
            local inside = xi:ge(0):logical_and(xi:le(w - 1)):logical_and(yi:ge(0))
                :logical_and(yi:le(h - 1))
            local idx = yi:clamp(0, h - 1):mul(w):add(xi:clamp(0, w - 1)):add(1):to("int64")
            local v = flat:gather(3, idx:reshape(n, 1, ho * wo):expand(n, c, ho * wo))
            return v:reshape(n, c, ho, wo), inside:to(input.dtype):unsqueeze(2)
        end
        if mode == "bicubic" then -- PyTorch's: the 4 x 4 cells around the unpadded point,
            -- each cell's coordinates padded, Keys' cubic convolution (A = -0.75) weights
            local ux = unnormalize(grid:select(4, 1), w, align)
            local uy = unnormalize(grid:select(4, 2), h, align)
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
                    local v, inside = at(pad_coordinate(bx:add(i - 2), w, pmode, align), yj)
                    local term = v:mul(inside):mul(cx[i]:unsqueeze(2))
                    row = row and row:add(term) or term
                end
                local term = row:mul(cy[j]:unsqueeze(2))
                out = out and out:add(term) or term
            end
            return out
        end
        if mode == "nearest" then
            local v, inside = at(x:round():detach(), y:round():detach())
            return v:mul(inside)
        end
        local x0, y0 = x:floor():detach(), y:floor():detach()
        local wx1, wy1 = x:sub(x0), y:sub(y0)
        local wx0, wy0 = wx1:neg():add(1), wy1:neg():add(1)
        local out
        for _, corner in ipairs({ { x0, y0, wx0, wy0 }, { x0 + 1, y0, wx1, wy0 },
            { x0, y0 + 1, wx0, wy1 }, { x0 + 1, y0 + 1, wx1, wy1 } }) do
            local v, inside = at(corner[1], corner[2])
            local term = v:mul(corner[3]:mul(corner[4]):unsqueeze(2)):mul(inside)
            out = out and out:add(term) or term
        end
        return out
    end
end
