-- ported_scripts129_spec.lua — pytorch/vision's torchvision/ops/roi_align.py, its pure-PyTorch
-- path (_bilinear_interpolate, _roi_align, roi_align, RoIAlign) in the 6-D advanced-indexing form
-- that replaced the functorch.dim one (0.15) from 0.16 on, read in the lazy_compile release line
-- (0.19 and later; the text of _roi_align is the same since 0.16), with torchvision/ops/_utils.py's
-- convert_boxes_to_roi_format and check_roi_boxes_shape; ported line for line at tiny sizes
-- (features 2 x 3 x 8 x 8, 4 boxes over both images, some partly outside the map, output 3 x 3,
-- spatial_scale 0.5, sampling_ratio 2 and -1, aligned true and false). The Python line stands
-- above each Lua line that differs from it. Values: PyTorch 1.13 running the same Python
-- (torchvision is not installed there; 1.13 indexes with int64 only, so its copy adds .long()).
-- Dims and indices are 1-based: the rois' batch column holds 1..N (Python's 0..N-1); the sample
-- coordinates y, x stay 0-based geometry and turn 1-based where they index.
local tide = require("tide")
local nn = tide.nn

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

local NA = tide.newaxis
local TOL = 1e-4

---------------------------------------------------------------------------------------------
-- torchvision/ops/_utils.py
---------------------------------------------------------------------------------------------
-- def _cat(tensors: List[Tensor], dim: int = 0) -> Tensor:
local function _cat(tensors, dim)
    -- if len(tensors) == 1:
    if #tensors == 1 then
        return tensors[1]
    end
    return tide.cat(tensors, dim)
end

-- def convert_boxes_to_roi_format(boxes: List[Tensor]) -> Tensor:
local function convert_boxes_to_roi_format(boxes)
    -- concat_boxes = _cat([b for b in boxes], dim=0)
    local concat_boxes = _cat(boxes, 1)
    local temp = {}
    -- for i, b in enumerate(boxes):
    for i, b in ipairs(boxes) do
        -- temp.append(torch.full_like(b[:, :1], i))
        temp[#temp + 1] = tide.full_like(b[{ {}, { 1, 1 } }], i)
    end
    -- ids = _cat(temp, dim=0)
    local ids = _cat(temp, 1)
    -- rois = torch.cat([ids, concat_boxes], dim=1)
    local rois = tide.cat({ ids, concat_boxes }, 2)
    return rois
end

-- def check_roi_boxes_shape(boxes: Union[Tensor, List[Tensor]]):
local function check_roi_boxes_shape(boxes)
    -- if isinstance(boxes, (list, tuple)):
    if type(boxes) == "table" and not tide.is_tensor(boxes) then
        for _, _tensor in ipairs(boxes) do
            -- torch._assert(_tensor.size(1) == 4, "The shape of the tensor in the boxes ...")
            assert(_tensor:size(2) == 4,
                "The shape of the tensor in the boxes list is not correct as List[Tensor[L, 4]]")
        end
    -- elif isinstance(boxes, torch.Tensor):
    elseif tide.is_tensor(boxes) then
        -- torch._assert(boxes.size(1) == 5, "The boxes tensor shape is not correct as ...")
        assert(boxes:size(2) == 5, "The boxes tensor shape is not correct as Tensor[K, 5]")
    else
        error("boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]]")
    end
end

---------------------------------------------------------------------------------------------
-- torchvision/ops/roi_align.py
---------------------------------------------------------------------------------------------
-- NB: all inputs are tensors
-- def _bilinear_interpolate(input, roi_batch_ind, y, x, ymask, xmask):
-- (input [N, C, H, W], roi_batch_ind [K], y [K, PH, IY], x [K, PW, IX], ymask [K, IY], xmask
-- [K, IX])
local function _bilinear_interpolate(input, roi_batch_ind, y, x, ymask, xmask)
    -- _, channels, height, width = input.size()
    local channels, height, width = input:size(2), input:size(3), input:size(4)

    -- deal with inverse element out of feature map boundary
    -- y = y.clamp(min=0)
    y = y:clamp({ min = 0 })
    -- x = x.clamp(min=0)
    x = x:clamp({ min = 0 })
    local y_low = y:int()
    local x_low = x:int()
    -- y_high = torch.where(y_low >= height - 1, height - 1, y_low + 1)
    local y_high = tide.where(y_low:ge(height - 1), height - 1, y_low + 1)
    -- y_low = torch.where(y_low >= height - 1, height - 1, y_low)
    y_low = tide.where(y_low:ge(height - 1), height - 1, y_low)
    -- y = torch.where(y_low >= height - 1, y.to(input.dtype), y)
    y = tide.where(y_low:ge(height - 1), y:to(input.dtype), y)

    -- x_high = torch.where(x_low >= width - 1, width - 1, x_low + 1)
    local x_high = tide.where(x_low:ge(width - 1), width - 1, x_low + 1)
    -- x_low = torch.where(x_low >= width - 1, width - 1, x_low)
    x_low = tide.where(x_low:ge(width - 1), width - 1, x_low)
    -- x = torch.where(x_low >= width - 1, x.to(input.dtype), x)
    x = tide.where(x_low:ge(width - 1), x:to(input.dtype), x)

    local ly = y - y_low
    local lx = x - x_low
    local hy = 1.0 - ly
    local hx = 1.0 - lx

    -- do bilinear interpolation, but respect the masking!
    -- def masked_index(y, x):  (y [K, PH, IY], x [K, PW, IX])
    local function masked_index(yy, xx)
        -- if ymask is not None:
        if ymask ~= nil then
            assert(xmask ~= nil)
            -- y = torch.where(ymask[:, None, :], y, 0)
            yy = tide.where(ymask[{ {}, NA, {} }], yy, 0)
            -- x = torch.where(xmask[:, None, :], x, 0)
            xx = tide.where(xmask[{ {}, NA, {} }], xx, 0)
        end
        -- return input[
        --     roi_batch_ind[:, None, None, None, None, None],
        --     torch.arange(channels, device=input.device)[None, :, None, None, None, None],
        --     y[:, None, :, None, :, None],  # prev [K, PH, IY]
        --     x[:, None, None, :, None, :],  # prev [K, PW, IX]
        -- ]  # [K, C, PH, PW, IY, IX]
        -- (1-based: the channel arange runs 1..C, the coordinates get + 1)
        return input[{
            roi_batch_ind[{ {}, NA, NA, NA, NA, NA }],
            tide.arange(1, channels + 1, { device = input.device })[{ NA, {}, NA, NA, NA, NA }],
            yy[{ {}, NA, {}, NA, {}, NA }] + 1,
            xx[{ {}, NA, NA, {}, NA, {} }] + 1,
        }]
    end

    local v1 = masked_index(y_low, x_low)
    local v2 = masked_index(y_low, x_high)
    local v3 = masked_index(y_high, x_low)
    local v4 = masked_index(y_high, x_high)

    -- all ws preemptively [K, C, PH, PW, IY, IX]
    -- def outer_prod(y, x):
    local function outer_prod(a, b)
        -- return y[:, None, :, None, :, None] * x[:, None, None, :, None, :]
        return a[{ {}, NA, {}, NA, {}, NA }] * b[{ {}, NA, NA, {}, NA, {} }]
    end

    local w1 = outer_prod(hy, hx)
    local w2 = outer_prod(hy, lx)
    local w3 = outer_prod(ly, hx)
    local w4 = outer_prod(ly, lx)

    local val = w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4
    return val
end

-- def maybe_cast(tensor):
local function maybe_cast(tensor)
    -- if torch.is_autocast_enabled() and tensor.is_cuda and tensor.dtype != torch.double:
    if tide.is_autocast_enabled() and tensor.is_cuda and tensor.dtype ~= "float64" then
        return tensor:float()
    else
        return tensor
    end
end

-- def _roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
--                aligned):
local function _roi_align(input, rois, spatial_scale, pooled_height, pooled_width,
                          sampling_ratio, aligned)
    local orig_dtype = input.dtype

    input = maybe_cast(input)
    rois = maybe_cast(rois)

    -- _, _, height, width = input.size()
    local height, width = input:size(3), input:size(4)

    -- ph = torch.arange(pooled_height, device=input.device)  # [PH]
    local ph = tide.arange(0, pooled_height, { device = input.device })
    -- pw = torch.arange(pooled_width, device=input.device)  # [PW]
    local pw = tide.arange(0, pooled_width, { device = input.device })

    -- roi_batch_ind = rois[:, 0].int()  # [K]
    local roi_batch_ind = rois[{ {}, 1 }]:int()
    -- offset = 0.5 if aligned else 0.0
    local offset = aligned and 0.5 or 0.0
    -- roi_start_w = rois[:, 1] * spatial_scale - offset  # [K]
    local roi_start_w = rois[{ {}, 2 }] * spatial_scale - offset
    -- roi_start_h = rois[:, 2] * spatial_scale - offset  # [K]
    local roi_start_h = rois[{ {}, 3 }] * spatial_scale - offset
    -- roi_end_w = rois[:, 3] * spatial_scale - offset  # [K]
    local roi_end_w = rois[{ {}, 4 }] * spatial_scale - offset
    -- roi_end_h = rois[:, 4] * spatial_scale - offset  # [K]
    local roi_end_h = rois[{ {}, 5 }] * spatial_scale - offset

    local roi_width = roi_end_w - roi_start_w
    local roi_height = roi_end_h - roi_start_h
    if not aligned then
        -- roi_width = torch.clamp(roi_width, min=1.0)  # [K]
        roi_width = tide.clamp(roi_width, { min = 1.0 })
        -- roi_height = torch.clamp(roi_height, min=1.0)  # [K]
        roi_height = tide.clamp(roi_height, { min = 1.0 })
    end

    local bin_size_h = roi_height / pooled_height
    local bin_size_w = roi_width / pooled_width

    local exact_sampling = sampling_ratio > 0

    -- roi_bin_grid_h = sampling_ratio if exact_sampling else torch.ceil(roi_height / pooled_height)
    local roi_bin_grid_h = exact_sampling and sampling_ratio
        or tide.ceil(roi_height / pooled_height)
    -- roi_bin_grid_w = sampling_ratio if exact_sampling else torch.ceil(roi_width / pooled_width)
    local roi_bin_grid_w = exact_sampling and sampling_ratio
        or tide.ceil(roi_width / pooled_width)

    local count, iy, ix, ymask, xmask
    if exact_sampling then
        -- count = max(roi_bin_grid_h * roi_bin_grid_w, 1)  # scalar
        count = math.max(roi_bin_grid_h * roi_bin_grid_w, 1)
        -- iy = torch.arange(roi_bin_grid_h, device=input.device)  # [IY]
        iy = tide.arange(0, roi_bin_grid_h, { device = input.device })
        -- ix = torch.arange(roi_bin_grid_w, device=input.device)  # [IX]
        ix = tide.arange(0, roi_bin_grid_w, { device = input.device })
        ymask = nil
        xmask = nil
    else
        -- count = torch.clamp(roi_bin_grid_h * roi_bin_grid_w, min=1)  # [K]
        count = tide.clamp(roi_bin_grid_h * roi_bin_grid_w, { min = 1 })
        -- we inefficiently suppose that we needed to sample ALL the points and mask out
        -- things that turned out to be unnecessary
        -- iy = torch.arange(height, device=input.device)  # [IY]
        iy = tide.arange(0, height, { device = input.device })
        -- ix = torch.arange(width, device=input.device)  # [IX]
        ix = tide.arange(0, width, { device = input.device })
        -- ymask = iy[None, :] < roi_bin_grid_h[:, None]  # [K, IY]
        ymask = iy[{ NA, {} }]:lt(roi_bin_grid_h[{ {}, NA }])
        -- xmask = ix[None, :] < roi_bin_grid_w[:, None]  # [K, IX]
        xmask = ix[{ NA, {} }]:lt(roi_bin_grid_w[{ {}, NA }])
    end

    -- def from_K(t):
    local function from_K(t)
        -- return t[:, None, None]
        return t[{ {}, NA, NA }]
    end

    -- y = (
    --     from_K(roi_start_h)
    --     + ph[None, :, None] * from_K(bin_size_h)
    --     + (iy[None, None, :] + 0.5).to(input.dtype) * from_K(bin_size_h / roi_bin_grid_h)
    -- )  # [K, PH, IY]
    local y = from_K(roi_start_h)
        + ph[{ NA, {}, NA }] * from_K(bin_size_h)
        + (iy[{ NA, NA, {} }] + 0.5):to(input.dtype) * from_K(bin_size_h / roi_bin_grid_h)
    -- x = (... the same with roi_start_w, pw, bin_size_w, ix, roi_bin_grid_w)  # [K, PW, IX]
    local x = from_K(roi_start_w)
        + pw[{ NA, {}, NA }] * from_K(bin_size_w)
        + (ix[{ NA, NA, {} }] + 0.5):to(input.dtype) * from_K(bin_size_w / roi_bin_grid_w)
    -- val = _bilinear_interpolate(input, roi_batch_ind, y, x, ymask, xmask)
    local val = _bilinear_interpolate(input, roi_batch_ind, y, x, ymask, xmask)

    -- Mask out samples that weren't actually adaptively needed
    if not exact_sampling then
        -- val = torch.where(ymask[:, None, None, None, :, None], val, 0)
        val = tide.where(ymask[{ {}, NA, NA, NA, {}, NA }], val, 0)
        -- val = torch.where(xmask[:, None, None, None, None, :], val, 0)
        val = tide.where(xmask[{ {}, NA, NA, NA, NA, {} }], val, 0)
    end

    -- output = val.sum((-1, -2))  # remove IY, IX ~> [K, C, PH, PW]
    local output = val:sum({ -1, -2 })
    -- if isinstance(count, torch.Tensor):
    if tide.is_tensor(count) then
        -- output /= count[:, None, None, None]
        output:div_(count[{ {}, NA, NA, NA }])
    else
        -- output /= count
        output:div_(count)
    end

    -- output = output.to(orig_dtype)
    output = output:to(orig_dtype)

    return output
end

-- def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
local function roi_align(input, boxes, output_size, spatial_scale, sampling_ratio, aligned)
    spatial_scale = spatial_scale or 1.0
    sampling_ratio = sampling_ratio or -1
    check_roi_boxes_shape(boxes)
    local rois = boxes
    -- output_size = _pair(output_size)
    if type(output_size) == "number" then
        output_size = { output_size, output_size }
    end
    -- if not isinstance(rois, torch.Tensor):
    if not tide.is_tensor(rois) then
        rois = convert_boxes_to_roi_format(rois)
    end
    -- (the compiled-ops branch, torch.ops.torchvision.roi_align, has no tide counterpart: the
    -- pure path is the one ported)
    -- return _roi_align(input, rois, spatial_scale, output_size[0], output_size[1], ...)
    return _roi_align(input, rois, spatial_scale, output_size[1], output_size[2],
        sampling_ratio, aligned)
end

-- class RoIAlign(nn.Module):
local RoIAlign = nn.Module:extend("RoIAlign")
-- def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
function RoIAlign:init(output_size, spatial_scale, sampling_ratio, aligned)
    self.output_size = output_size
    self.spatial_scale = spatial_scale
    self.sampling_ratio = sampling_ratio
    self.aligned = aligned or false
end

-- def forward(self, input: Tensor, rois: Union[Tensor, List[Tensor]]) -> Tensor:
function RoIAlign:forward(input, rois)
    return roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio,
        self.aligned)
end

-- def __repr__(self) -> str:  (tide's tostring prints ClassName(extra_repr()))
function RoIAlign:extra_repr()
    -- f"output_size={self.output_size}" f", spatial_scale={self.spatial_scale}" ...
    return string.format("output_size=%s, spatial_scale=%s, sampling_ratio=%s, aligned=%s",
        tostring(self.output_size), tostring(self.spatial_scale),
        tostring(self.sampling_ratio), self.aligned and "True" or "False")
end

---------------------------------------------------------------------------------------------
-- fixed data, as /tmp's PyTorch script builds it
---------------------------------------------------------------------------------------------
-- feat = torch.sin(torch.arange(384.) * 0.37).view(2, 3, 8, 8) + 0.01 * torch.arange(384.)...
local function features()
    local r = tide.arange(0, 2 * 3 * 8 * 8, { dtype = "float32" })
    return (tide.sin(r * 0.37) + 0.01 * r):view(2, 3, 8, 8)
end
-- boxes on the 16 x 16 image (spatial_scale 0.5): two of them run past the map's edges, one is
-- under a pixel wide once scaled (the non-aligned clamp to 1.0)
local function box_list()
    return {
        tide.tensor({ { 1.0, 2.0, 9.0, 11.0 }, { 10.0, -2.0, 20.0, 7.0 } }),
        tide.tensor({ { -3.0, 4.0, 6.0, 18.5 }, { 4.5, 5.5, 6.0, 6.5 } }),
    }
end
-- W = torch.cos(torch.arange(108.) * 0.71).view(4, 3, 3, 3); loss = (out * W).sum()
local function weights()
    return tide.cos(tide.arange(0, 108, { dtype = "float32" }) * 0.71):view(4, 3, 3, 3)
end

-- PyTorch 1.13 on the same Python: out sum, (out * W) sum, out[1,1,1,1], out[2,3,3,2],
-- out[3,2,1,3], out[4,1,2,2]; grad sum, |grad| sum, (grad * feat) sum, grad[1,1,3,2],
-- grad[2,3,6,1], grad[1,2,1,8], grad[2,1,8,4] (1-based)
local WANT = {
    { sr = 2, aligned = false,
        out = { 204.7401428, 6.8621893, 0.1247005, 1.7936239, 2.9462473, 1.9036050 },
        grad = { 1.6503127, 44.4638901, 6.8621874, 0.3945620, -0.6137534, 0.1341474, 0.2944393 } },
    { sr = 2, aligned = true,
        out = { 206.0265503, 5.6457834, 0.0457329, 1.3868647, 2.9430368, 2.0842583 },
        grad = { 1.6503118, 43.0116539, 5.6457806, 0.0875756, -0.6225453, -0.3954203, 0.0605038 } },
    { sr = -1, aligned = false,
        out = { 204.7780457, 6.8460913, 0.1247005, 1.7936239, 2.9395168, 1.9036051 },
        grad = { 1.6503123, 43.4225311, 6.8460913, 0.3945620, -0.4960792, 0.1341474, 0.2899346 } },
    { sr = -1, aligned = true,
        out = { 205.7208862, 5.4533596, 0.0457329, 1.3868647, 2.8884306, 2.0842586 },
        grad = { 1.6503121, 42.2130623, 5.4533615, 0.0875756, -0.6625925, -0.3954203, 0.0569618 } },
}

describe("ported torchvision ops/roi_align.py (pure-PyTorch _roi_align)", function()
    it("convert_boxes_to_roi_format and check_roi_boxes_shape", function()
        local rois = convert_boxes_to_roi_format(box_list())
        assert.are.same({ 4, 5 }, rois:size())
        assert.are.same({ { 1, 1, 2, 9, 11 }, { 1, 10, -2, 20, 7 }, { 2, -3, 4, 6, 18.5 },
            { 2, 4.5, 5.5, 6, 6.5 } }, rois:tolist())
        check_roi_boxes_shape(rois)
        check_roi_boxes_shape(box_list())
        assert.error_matches(function() check_roi_boxes_shape(tide.zeros(4, 4)) end,
            "The boxes tensor shape is not correct as Tensor[K, 5]", nil, true)
        assert.error_matches(function() check_roi_boxes_shape({ tide.zeros(2, 5) }) end,
            "The shape of the tensor in the boxes list is not correct as List[Tensor[L, 4]]", nil,
            true)
    end)

    for _, w in ipairs(WANT) do
        it(string.format("sampling_ratio %d, aligned %s: output and grad match PyTorch", w.sr,
            tostring(w.aligned)), function()
            local feat = features()
            local f = feat:clone():requires_grad_()
            local out = roi_align(f, box_list(), 3, 0.5, w.sr, w.aligned)
            assert.are.same({ 4, 3, 3, 3 }, out:size())
            local W = weights()
            local loss = (out * W):sum()
            loss:backward()
            local o = out:detach()
            assert_close_list(w.out, { o:sum():item(), loss:item(), o[{ 1, 1, 1, 1 }]:item(),
                o[{ 2, 3, 3, 2 }]:item(), o[{ 3, 2, 1, 3 }]:item(), o[{ 4, 1, 2, 2 }]:item() },
                TOL, "out")
            local g = f.grad
            assert.are.same({ 2, 3, 8, 8 }, g:size())
            assert_close_list(w.grad, { g:sum():item(), g:abs():sum():item(),
                (g * feat):sum():item(), g[{ 1, 1, 3, 2 }]:item(), g[{ 2, 3, 6, 1 }]:item(),
                g[{ 1, 2, 1, 8 }]:item(), g[{ 2, 1, 8, 4 }]:item() }, TOL, "grad")
        end)
    end

    it("RoIAlign: list of boxes and the rois tensor agree; repr", function()
        local m = RoIAlign(3, 0.5, -1, true)
        -- (tide's tostring adds "  [0 parameters]")
        local repr = "RoIAlign(output_size=3, spatial_scale=0.5, sampling_ratio=-1, aligned=True)"
        assert.are.equal(repr, tostring(m):sub(1, #repr))
        local feat = features()
        local a = m(feat, box_list())
        local b = m(feat, convert_boxes_to_roi_format(box_list()))
        assert.are.same({ 4, 3, 3, 3 }, a:size())
        assert.is_true(tide.equal(a, b))
        assert_close_list({ 205.7208862, 5.4533596 },
            { a:sum():item(), (a * weights()):sum():item() }, TOL, "RoIAlign")
        -- a box 1-wide after scaling, aligned false: the width clamp keeps the bins 1/3 wide
        local one = _roi_align(feat, tide.tensor({ { 1, 4, 4, 4, 4 } }), 0.5, 3, 3, 2, false)
        assert.are.same({ 1, 3, 3, 3 }, one:size())
        assert_close_list({ 23.9056301, 1.5164409 }, { one:sum():item(),
            one[{ 1, 2, 3, 1 }]:item() }, TOL, "zero-size box")
    end)
end)
