-- tide.utils.image — torchvision 0.14's make_grid and save_image, and the conversions
-- TensorBoard's image summaries make (torch/utils/tensorboard/_utils.py: convert_to_HWC and its
-- own unpadded make_grid). PNG bytes come from lua/image_io.c.
local tide = require("tide")
local core = require("tide.core")
local args = require("tide.op_args")
local files = require("tide._files")

local M = {}

local GRID_OPTIONS = { "nrow", "padding", "normalize", "value_range", "scale_each", "pad_value" }

local fail = require("tide.autograd.raise") -- at the user's line

-- x detached, on the host, once (a CUDA tensor is copied a single time)
local function host(x)
    if x.requires_grad then
        x = x:detach()
    end
    return x:to("cpu")
end

-- x, a tensor or a list of tensors of one shape (torchvision stacks a list: a batch)
local function check_images(op, x)
    if core.is_tensor(x) then
        return x
    end
    if type(x) ~= "table" then
        fail(("tide: %s: expected a tensor or a list of tensors, got %s"):format(op, type(x)))
    end
    args.check_list(op, x, "the images")
    if #x == 0 then
        fail(("tide: %s: expected a tensor or a non-empty list of tensors, got an empty list")
            :format(op))
    end
    for k = 1, #x do
        if not core.is_tensor(x[k]) then
            fail(("tide: %s: expected a tensor or a list of tensors, got a list containing a %s "
                .. "(element %d)"):format(op, type(x[k]), k))
        end
    end
    return tide.no_grad(function()
        return args.as_op(op, "stack", tide.stack, x, 1)
    end)
end

local function norm_ip(img, low, high)
    img:clamp_(low, high)
    img:sub_(low):div_(math.max(high - low, 1e-5))
end

local function norm_range(t, value_range)
    if value_range ~= nil then
        norm_ip(t, value_range[1], value_range[2])
    else
        norm_ip(t, t:min():item(), t:max():item())
    end
end

-- the images t[1..N] (N, C, H, W) tiled ncols to a row (fewer when N is smaller) into
-- (C, rows * (H + padding) + padding, cols * (W + padding) + padding), pad_value around them and
-- where images run out
local function tile(t, ncols, padding, pad_value)
    local n = t:size(1)
    local cols = math.min(ncols, n)
    local rows = math.ceil(n / cols)
    local height, width = t:size(3) + padding, t:size(4) + padding
    local grid = tide.full({ t:size(2), height * rows + padding, width * cols + padding },
        pad_value, { dtype = t.dtype, device = t.device })
    local k = 1
    for y = 0, rows - 1 do
        for x = 0, cols - 1 do
            if k > n then
                break
            end
            grid:narrow(2, y * height + padding + 1, height - padding)
                :narrow(3, x * width + padding + 1, width - padding):copy_(t:select(1, k))
            k = k + 1
        end
    end
    return grid
end

--- make_grid(tensor[, {nrow = 8, padding = 2, normalize = false, value_range =, scale_each =
--- false, pad_value = 0}]) -> a (C, H', W') image grid, as torchvision 0.14's: 2-D (H, W), 3-D
--- (C, H, W) and 4-D (N, C, H, W) inputs, or a list of same-shaped tensors (stacked into a
--- batch); one channel is repeated to three; a single image comes back without padding.
function M.make_grid(tensor, opts)
    local op = "make_grid"
    tensor = check_images(op, tensor)
    opts = args.options(op, opts, GRID_OPTIONS, "{nrow = 8}")
    local nrow, padding = opts.nrow or 8, opts.padding or 2
    local pad_value = opts.pad_value or 0
    local vr = opts.value_range
    if vr ~= nil
        and (type(vr) ~= "table" or type(vr[1]) ~= "number" or type(vr[2]) ~= "number") then
        fail("tide: make_grid: value_range must be a table {min, max} of two numbers")
    end
    if type(nrow) ~= "number" or nrow < 1 or nrow ~= math.floor(nrow) then
        fail(("tide: make_grid: nrow must be a positive integer, got %s"):format(tostring(nrow)))
    end
    if type(padding) ~= "number" or padding < 0 or padding ~= math.floor(padding) then
        fail(("tide: make_grid: padding must be an integer >= 0, got %s"):format(tostring(padding)))
    end
    return tide.no_grad(function()
        local t = tensor
        if t:dim() == 2 then
            t = t:unsqueeze(1)
        end
        if t:dim() == 3 then
            if t:size(1) == 1 then
                t = tide.cat({ t, t, t }, 1)
            end
            t = t:unsqueeze(1)
        end
        if t:dim() ~= 4 then
            fail(("tide: make_grid: expected a 2-D, 3-D or 4-D tensor, got %d-D"):format(t:dim()))
        end
        if t:size(2) == 1 then
            t = tide.cat({ t, t, t }, 2)
        end
        if opts.normalize then
            t = t:clone()
            if opts.scale_each then
                for k = 1, t:size(1) do
                    norm_range(t:select(1, k), vr)
                end
            else
                norm_range(t, vr)
            end
        end
        if t:size(1) == 1 then
            return t:squeeze(1)
        end
        return tile(t, nrow, padding, pad_value)
    end)
end

-- the (H, W, C) uint8 host tensor of a (C, H, W) float image in [0, 1], as save_image rounds it
local function to_uint8_hwc(grid)
    return grid:mul(255):add_(0.5):clamp_(0, 255):permute(2, 3, 1):to("cpu", "uint8"):contiguous()
end

--- save_image(tensor, fp[, make_grid's options and format = "png"]) writes make_grid(tensor, opts)
--- as an 8-bit PNG (RGB; LA for 2 channels, RGBA for 4, as PIL), each value v as floor(v * 255 +
--- 0.5) clamped to [0, 255], as torchvision; fp is a path or an open Lua file (Python's file
--- object), format (torchvision's third argument, also as a string there) "png" or nil.
function M.save_image(tensor, fp, opts)
    tensor = check_images("save_image", tensor)
    local handle = io.type(fp) == "file"
    if type(fp) ~= "string" and not handle then
        fail(("tide: save_image: expected a file path (string) or an open file, got %s")
            :format(io.type(fp) or type(fp)))
    end
    if type(opts) == "string" then -- save_image(t, fp, "png"): torchvision's positional format
        opts = { format = opts }
    end
    if type(opts) == "table" and opts.format ~= nil then
        local f = opts.format
        if type(f) ~= "string" or f:lower() ~= "png" then
            fail(("tide: save_image: format %s is not written; only \"png\" is (PNG bytes)")
                :format(type(f) == "string" and ("%q"):format(f) or type(f)))
        end
        local rest = {}
        for k, v in pairs(opts) do
            rest[k] = v
        end
        rest.format, opts = nil, rest
    end
    local grid = M.make_grid(tensor, opts)
    local bytes = tide.no_grad(function()
        return core._png_encode(to_uint8_hwc(host(grid)))
    end)
    if handle then
        fp:write(bytes)
    else
        files.write(fp, bytes, "save_image")
    end
end

-- ---- TensorBoard's conversions -------------------------------------------------------------

--- TensorBoard's make_grid (torch/utils/tensorboard/_utils.py): N1HW or N3HW into (3, H*rows,
--- W*cols), no padding, zeros where images run out
function M.tb_grid(x, ncols)
    ncols = ncols or 8
    if x:size(2) == 1 then
        x = tide.cat({ x, x, x }, 2)
    end
    if x:dim() ~= 4 or x:size(2) ~= 3 then
        fail("tide: add_images: expected images with 1 or 3 channels")
    end
    return tile(x, ncols, 0, 0)
end

-- the positions of the letters of `want` in the string fmt ("CHW" in "HWC" -> {3, 1, 2})
local function order(op, fmt, want, ndim)
    if type(fmt) ~= "string" then
        fail(("tide: %s: dataformats must be a string such as \"CHW\", got %s")
            :format(op, type(fmt)))
    end
    local f = fmt:upper()
    local ok = #f == ndim
    local perm = {}
    for i = 1, #want do
        perm[i] = f:find(want:sub(i, i), 1, true)
        ok = ok and perm[i] ~= nil
    end
    if not ok or #f ~= #want then
        fail(("tide: %s: dataformats %q does not describe a %d-D image tensor; use a permutation "
            .. "of %q"):format(op, fmt, ndim, want:sub(1, ndim)))
    end
    return perm
end

--- convert_to_HWC + TensorBoard's scaling: an (H, W, C) uint8 host tensor; float values are
--- multiplied by 255 and truncated (PyTorch's astype(uint8)), clamped to [0, 255] first
function M.to_hwc_uint8(op, x, dataformats)
    x = host(x)
    local nd = x:dim()
    local hwc
    if nd == 4 then
        local p = order(op, dataformats, "NCHW", 4)
        hwc = M.tb_grid(x:permute(p[1], p[2], p[3], p[4])):permute(2, 3, 1)
    elseif nd == 3 then
        local p = order(op, dataformats, "HWC", 3)
        hwc = x:permute(p[1], p[2], p[3])
        if hwc:size(3) == 1 then
            hwc = tide.cat({ hwc, hwc, hwc }, 3)
        end
    elseif nd == 2 then
        local p = order(op, dataformats, "HW", 2)
        local hw = x:permute(p[1], p[2]):unsqueeze(3)
        hwc = tide.cat({ hw, hw, hw }, 3)
    else
        fail(("tide: %s: expected a 2-D, 3-D or 4-D image tensor, got %d-D"):format(op, nd))
    end
    if hwc.dtype ~= "uint8" then
        hwc = hwc:float():mul(255):clamp(0, 255)
    end
    return hwc:to("cpu", "uint8"):contiguous()
end

return M
