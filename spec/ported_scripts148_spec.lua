-- ported_scripts148_spec.lua — pytorch/vision v0.14's torchvision/transforms/functional_tensor.py
-- (_assert_image_tensor, get_dimensions, _max_value, _assert_channels, convert_image_dtype, vflip,
-- hflip, crop with its padding branch, rgb_to_grayscale, adjust_brightness/contrast/saturation,
-- adjust_hue with _rgb2hsv / _hsv2rgb, adjust_gamma, _blend, invert, posterize, solarize,
-- autocontrast, equalize (_scale_channel by bincount and by histc), pad (constant, reflect, edge,
-- symmetric through _pad_symmetric), _cast_squeeze_in / _cast_squeeze_out, gaussian_blur
-- (_get_gaussian_kernel1d/2d, reflect padding, grouped conv2d), normalize, erase), ported line for
-- line on fixed 2 x 3 x 5 x 6 images (uint8 and float32, built from a formula). The Python line
-- stands above each Lua line that differs from it. Dims are 1-based (dim=-3 stays -3); Python's
-- 0-based pixel indices and slices become 1-based inclusive ranges. Each output is checked against
-- PyTorch 1.13's (the same functions pasted into a script): shape, dtype, its sum and a
-- weighted sum. equalize runs on a 3 x 16 x 20 uint8 image too (with 30 pixels a channel its
-- step is 0 and it returns the channel unchanged). The search index holds only an older revision
-- of this file (dim-0 forms); the v0.14 bodies here (dim=-3, _max_value, crop's pad branch,
-- _pad_symmetric's negative crop) follow the v0.14 release.
local tide = require("tide")
local F = tide.nn.functional

local ported = require("spec.support.ported")

local INT_DTYPES = { uint8 = 255, int8 = 127, int16 = 32767, int32 = 2147483647,
    int64 = 9223372036854775807 }

-- def _is_tensor_a_torch_image(x: Tensor) -> bool:
local function _is_tensor_a_torch_image(x)
    return x.ndim >= 2
end

-- def _assert_image_tensor(img: Tensor) -> None:
local function _assert_image_tensor(img)
    if not _is_tensor_a_torch_image(img) then
        error("TypeError: Tensor is not a torch image.")
    end
end

-- def get_dimensions(img: Tensor) -> List[int]:
local function get_dimensions(img)
    _assert_image_tensor(img)
    -- channels = 1 if img.ndim == 2 else img.shape[-3]
    local channels = img.ndim == 2 and 1 or img.shape[img.ndim - 2]
    -- height, width = img.shape[-2:]
    local height, width = img.shape[img.ndim - 1], img.shape[img.ndim]
    return { channels, height, width }
end

-- def _max_value(dtype: torch.dtype) -> int:
local function _max_value(dtype)
    -- if dtype == torch.uint8: return 255 ... elif dtype == torch.int64: ... else: return 1
    return INT_DTYPES[dtype] or 1
end

-- def _assert_channels(img: Tensor, permitted: List[int]) -> None:
local function _assert_channels(img, permitted)
    local c = get_dimensions(img)[1]
    for _, p in ipairs(permitted) do
        if c == p then return end
    end
    error("TypeError: Input image tensor permitted channel values are ..., but found " .. c)
end

-- def convert_image_dtype(image: torch.Tensor, dtype: torch.dtype = torch.float) -> torch.Tensor:
local function convert_image_dtype(image, dtype)
    dtype = dtype or "float32"
    if image.dtype == dtype then
        return image
    end
    if image:is_floating_point() then
        -- if torch.tensor(0, dtype=dtype).is_floating_point():
        if tide.tensor(0, { dtype = dtype }):is_floating_point() then
            return image:to(dtype)
        end
        -- float to int
        -- if (image.dtype == torch.float32 and dtype in (torch.int32, torch.int64)) or (...)
        if (image.dtype == "float32" and (dtype == "int32" or dtype == "int64"))
            or (image.dtype == "float64" and dtype == "int64") then
            error(string.format("RuntimeError: The cast from %s to %s cannot be performed safely.",
                image.dtype, dtype))
        end
        local eps = 1e-3
        -- max_val = float(_max_value(dtype))
        local max_val = _max_value(dtype) + 0.0
        local result = image:mul(max_val + 1.0 - eps)
        return result:to(dtype)
    else
        local input_max = _max_value(image.dtype) + 0.0
        -- int to float
        if tide.tensor(0, { dtype = dtype }):is_floating_point() then
            image = image:to(dtype)
            return image / input_max
        end
        local output_max = _max_value(dtype) + 0.0
        -- int to int
        if input_max > output_max then
            -- factor = int((input_max + 1) // (output_max + 1))
            local factor = math.floor((input_max + 1) / (output_max + 1))
            -- image = torch.div(image, factor, rounding_mode="floor")
            image = tide.div(image, factor, { rounding_mode = "floor" })
            return image:to(dtype)
        else
            local factor = math.floor((output_max + 1) / (input_max + 1))
            image = image:to(dtype)
            return image * factor
        end
    end
end

-- def vflip(img: Tensor) -> Tensor:
local function vflip(img)
    _assert_image_tensor(img)
    return img:flip(-2)
end

-- def hflip(img: Tensor) -> Tensor:
local function hflip(img)
    _assert_image_tensor(img)
    return img:flip(-1)
end

local pad -- crop's padding branch calls it

-- def crop(img: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
-- (top and left stay Python's 0-based offsets: a crop box can start outside the image)
local function crop(img, top, left, height, width)
    _assert_image_tensor(img)
    -- _, h, w = get_dimensions(img)
    local dims = get_dimensions(img)
    local h, w = dims[2], dims[3]
    local right = left + width
    local bottom = top + height
    if left < 0 or top < 0 or right > w or bottom > h then
        -- padding_ltrb = [max(-left, 0), max(-top, 0), max(right - w, 0), max(bottom - h, 0)]
        local padding_ltrb = { math.max(-left, 0), math.max(-top, 0), math.max(right - w, 0),
            math.max(bottom - h, 0) }
        -- return pad(img[..., max(top, 0) : bottom, max(left, 0) : right], padding_ltrb, fill=0)
        return pad(img[{ "...", { math.max(top, 0) + 1, math.min(bottom, h) },
            { math.max(left, 0) + 1, math.min(right, w) } }], padding_ltrb, 0)
    end
    -- return img[..., top:bottom, left:right]
    return img[{ "...", { top + 1, bottom }, { left + 1, right } }]
end

-- def rgb_to_grayscale(img: Tensor, num_output_channels: int = 1) -> Tensor:
local function rgb_to_grayscale(img, num_output_channels)
    num_output_channels = num_output_channels or 1
    if img.ndim < 3 then
        error("TypeError: Input image tensor should have at least 3 dimensions, but found "
            .. img.ndim)
    end
    _assert_channels(img, { 1, 3 })
    local l_img
    -- if img.shape[-3] == 3:
    if img:size(-3) == 3 then
        -- r, g, b = img.unbind(dim=-3)
        local rgb = img:unbind(-3)
        local r, g, b = rgb[1], rgb[2], rgb[3]
        -- l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype)
        l_img = (0.2989 * r + 0.587 * g + 0.114 * b):to(img.dtype)
        l_img = l_img:unsqueeze(-3)
    else
        l_img = img:clone()
    end
    if num_output_channels == 3 then
        return l_img:expand(img.shape)
    end
    return l_img
end

-- def _blend(img1: Tensor, img2: Tensor, ratio: float) -> Tensor:
local function _blend(img1, img2, ratio)
    ratio = ratio + 0.0
    local bound = _max_value(img1.dtype)
    -- return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)
    return (ratio * img1 + (1.0 - ratio) * img2):clamp(0, bound):to(img1.dtype)
end

-- def adjust_brightness(img: Tensor, brightness_factor: float) -> Tensor:
local function adjust_brightness(img, brightness_factor)
    if brightness_factor < 0 then
        error("ValueError: brightness_factor is not non-negative.")
    end
    _assert_image_tensor(img)
    _assert_channels(img, { 1, 3 })
    return _blend(img, tide.zeros_like(img), brightness_factor)
end

-- def adjust_contrast(img: Tensor, contrast_factor: float) -> Tensor:
local function adjust_contrast(img, contrast_factor)
    if contrast_factor < 0 then
        error("ValueError: contrast_factor is not non-negative.")
    end
    _assert_image_tensor(img)
    _assert_channels(img, { 3, 1 })
    local c = get_dimensions(img)[1]
    -- dtype = img.dtype if torch.is_floating_point(img) else torch.float32
    local dtype = img:is_floating_point() and img.dtype or "float32"
    local mean
    if c == 3 then
        -- mean = torch.mean(rgb_to_grayscale(img).to(dtype), dim=(-3, -2, -1), keepdim=True)
        mean = tide.mean(rgb_to_grayscale(img):to(dtype), { -3, -2, -1 }, true)
    else
        mean = tide.mean(img:to(dtype), { -3, -2, -1 }, true)
    end
    return _blend(img, mean, contrast_factor)
end

-- def _rgb2hsv(img: Tensor) -> Tensor:
local function _rgb2hsv(img)
    -- r, g, b = img.unbind(dim=-3)
    local rgb = img:unbind(-3)
    local r, g, b = rgb[1], rgb[2], rgb[3]

    -- Implementation is based on Pillow's src/libImaging/Convert.c#L330
    -- maxc = torch.max(img, dim=-3).values
    local maxc = (tide.max(img, -3))
    -- minc = torch.min(img, dim=-3).values
    local minc = (tide.min(img, -3))

    -- The algorithm erases S and H channel where `maxc = minc`. This avoids NaN
    -- eqc = maxc == minc   (Lua's == compares two tensors as objects, giving a boolean: eq)
    local eqc = maxc:eq(minc)

    local cr = maxc - minc
    -- Since `eqc => cr = 0`, replacing denominator with 1 when `eqc` is fine.
    local ones = tide.ones_like(maxc)
    -- s = cr / torch.where(eqc, ones, maxc)
    local s = cr / tide.where(eqc, ones, maxc)
    -- cr_divisor = torch.where(eqc, ones, cr)
    local cr_divisor = tide.where(eqc, ones, cr)
    local rc = (maxc - r) / cr_divisor
    local gc = (maxc - g) / cr_divisor
    local bc = (maxc - b) / cr_divisor

    -- hr = (maxc == r) * (bc - gc)
    local hr = maxc:eq(r) * (bc - gc)
    -- hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    local hg = maxc:eq(g):logical_and(maxc:ne(r)) * (2.0 + rc - bc)
    -- hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    local hb = maxc:ne(g):logical_and(maxc:ne(r)) * (4.0 + gc - rc)
    local h = hr + hg + hb
    -- h = torch.fmod((h / 6.0 + 1.0), 1.0)
    h = tide.fmod((h / 6.0 + 1.0), 1.0)
    -- return torch.stack((h, s, maxc), dim=-3)
    return tide.stack({ h, s, maxc }, -3)
end

-- def _hsv2rgb(img: Tensor) -> Tensor:
local function _hsv2rgb(img)
    -- h, s, v = img.unbind(dim=-3)
    local hsv = img:unbind(-3)
    local h, s, v = hsv[1], hsv[2], hsv[3]
    local i = tide.floor(h * 6.0)
    local f = (h * 6.0) - i
    -- i = i.to(dtype=torch.int32)
    i = i:to("int32")

    -- p = torch.clamp((v * (1.0 - s)), 0.0, 1.0)
    local p = tide.clamp((v * (1.0 - s)), 0.0, 1.0)
    local q = tide.clamp((v * (1.0 - s * f)), 0.0, 1.0)
    local t = tide.clamp((v * (1.0 - s * (1.0 - f))), 0.0, 1.0)
    i = i % 6

    -- mask = i.unsqueeze(dim=-3) == torch.arange(6, device=i.device).view(-1, 1, 1)
    local mask = i:unsqueeze(-3):eq(tide.arange(0, 6, { device = i.device }):view(-1, 1, 1))

    -- a1 = torch.stack((v, q, p, p, t, v), dim=-3)
    local a1 = tide.stack({ v, q, p, p, t, v }, -3)
    local a2 = tide.stack({ t, v, v, q, p, p }, -3)
    local a3 = tide.stack({ p, p, t, v, v, q }, -3)
    -- a4 = torch.stack((a1, a2, a3), dim=-4)
    local a4 = tide.stack({ a1, a2, a3 }, -4)

    -- return torch.einsum("...ijk, ...xijk -> ...xjk", mask.to(dtype=img.dtype), a4)
    return tide.einsum("...ijk, ...xijk -> ...xjk", mask:to(img.dtype), a4)
end

-- def adjust_hue(img: Tensor, hue_factor: float) -> Tensor:
local function adjust_hue(img, hue_factor)
    -- if not (-0.5 <= hue_factor <= 0.5):
    if not (-0.5 <= hue_factor and hue_factor <= 0.5) then
        error(string.format("ValueError: hue_factor (%s) is not in [-0.5, 0.5].", hue_factor))
    end
    _assert_image_tensor(img)
    _assert_channels(img, { 1, 3 })
    if get_dimensions(img)[1] == 1 then -- Match PIL behaviour
        return img
    end

    local orig_dtype = img.dtype
    if img.dtype == "uint8" then
        -- img = img.to(dtype=torch.float32) / 255.0
        img = img:to("float32") / 255.0
    end

    img = _rgb2hsv(img)
    -- h, s, v = img.unbind(dim=-3)
    local hsv = img:unbind(-3)
    local h, s, v = hsv[1], hsv[2], hsv[3]
    h = (h + hue_factor) % 1.0
    -- img = torch.stack((h, s, v), dim=-3)
    img = tide.stack({ h, s, v }, -3)
    local img_hue_adj = _hsv2rgb(img)

    if orig_dtype == "uint8" then
        -- img_hue_adj = (img_hue_adj * 255.0).to(dtype=orig_dtype)
        img_hue_adj = (img_hue_adj * 255.0):to(orig_dtype)
    end

    return img_hue_adj
end

-- def adjust_saturation(img: Tensor, saturation_factor: float) -> Tensor:
local function adjust_saturation(img, saturation_factor)
    if saturation_factor < 0 then
        error("ValueError: saturation_factor is not non-negative.")
    end
    _assert_image_tensor(img)
    _assert_channels(img, { 1, 3 })
    if get_dimensions(img)[1] == 1 then -- Match PIL behaviour
        return img
    end
    return _blend(img, rgb_to_grayscale(img), saturation_factor)
end

-- def adjust_gamma(img: Tensor, gamma: float, gain: float = 1) -> Tensor:
local function adjust_gamma(img, gamma, gain)
    gain = gain or 1
    _assert_channels(img, { 1, 3 })
    if gamma < 0 then
        error("ValueError: Gamma should be a non-negative real number")
    end
    local result = img
    local dtype = img.dtype
    if not img:is_floating_point() then
        result = convert_image_dtype(result, "float32")
    end
    -- result = (gain * result**gamma).clamp(0, 1)
    result = (gain * result ^ gamma):clamp(0, 1)
    result = convert_image_dtype(result, dtype)
    return result
end

-- def _pad_symmetric(img: Tensor, padding: List[int]) -> Tensor:
local function _pad_symmetric(img, padding)
    -- padding is left, right, top, bottom

    -- crop if needed
    if padding[1] < 0 or padding[2] < 0 or padding[3] < 0 or padding[4] < 0 then
        -- neg_min_padding = [-min(x, 0) for x in padding]
        local neg_min_padding = {}
        for k, x in ipairs(padding) do neg_min_padding[k] = -math.min(x, 0) end
        local crop_left, crop_right, crop_top, crop_bottom = neg_min_padding[1],
            neg_min_padding[2], neg_min_padding[3], neg_min_padding[4]
        -- img = img[..., crop_top : img.shape[-2] - crop_bottom,
        --            crop_left : img.shape[-1] - crop_right]
        img = img[{ "...", { crop_top + 1, img:size(-2) - crop_bottom },
            { crop_left + 1, img:size(-1) - crop_right } }]
        -- padding = [max(x, 0) for x in padding]
        local p = {}
        for k, x in ipairs(padding) do p[k] = math.max(x, 0) end
        padding = p
    end

    local in_sizes = img:size()

    -- _x_indices = [i for i in range(in_sizes[-1])]  # [0, 1, 2, 3, ...]
    -- left_indices = [i for i in range(padding[0] - 1, -1, -1)]  # e.g. [3, 2, 1, 0]
    -- right_indices = [-(i + 1) for i in range(padding[1])]  # e.g. [-1, -2, -3]
    -- x_indices = torch.tensor(left_indices + _x_indices + right_indices, device=img.device)
    -- (1-based: left [4, 3, 2, 1], then 1..W, then -1, -2, ...: negatives count from the end)
    local x_indices = {}
    for i = padding[1], 1, -1 do x_indices[#x_indices + 1] = i end
    for i = 1, in_sizes[#in_sizes] do x_indices[#x_indices + 1] = i end
    for i = 0, padding[2] - 1 do x_indices[#x_indices + 1] = -(i + 1) end
    x_indices = tide.tensor(x_indices, { dtype = "int64", device = img.device })

    local y_indices = {}
    for i = padding[3], 1, -1 do y_indices[#y_indices + 1] = i end
    for i = 1, in_sizes[#in_sizes - 1] do y_indices[#y_indices + 1] = i end
    for i = 0, padding[4] - 1 do y_indices[#y_indices + 1] = -(i + 1) end
    y_indices = tide.tensor(y_indices, { dtype = "int64", device = img.device })

    local ndim = img.ndim
    if ndim == 3 then
        -- return img[:, y_indices[:, None], x_indices[None, :]]
        return img[{ {}, y_indices[{ {}, tide.newaxis }], x_indices[{ tide.newaxis, {} }] }]
    elseif ndim == 4 then
        -- return img[:, :, y_indices[:, None], x_indices[None, :]]
        return img[{ {}, {}, y_indices[{ {}, tide.newaxis }], x_indices[{ tide.newaxis, {} }] }]
    else
        error("RuntimeError: Symmetric padding of N-D tensors are not supported yet")
    end
end

-- def _parse_pad_padding(padding: Union[int, List[int]]) -> List[int]:
local function _parse_pad_padding(padding)
    local pad_left, pad_right, pad_top, pad_bottom
    if type(padding) == "number" then
        pad_left, pad_right, pad_top, pad_bottom = padding, padding, padding, padding
    elseif #padding == 1 then
        local p1 = padding[1]
        pad_left, pad_right, pad_top, pad_bottom = p1, p1, p1, p1
    elseif #padding == 2 then
        pad_left, pad_right = padding[1], padding[1]
        pad_top, pad_bottom = padding[2], padding[2]
    else
        pad_left = padding[1]
        pad_top = padding[2]
        pad_right = padding[3]
        pad_bottom = padding[4]
    end
    return { pad_left, pad_right, pad_top, pad_bottom }
end

-- def pad(img: Tensor, padding: Union[int, List[int]], fill: Optional[Union[int, float]] = 0,
--         padding_mode: str = "constant") -> Tensor:
pad = function(img, padding, fill, padding_mode)
    _assert_image_tensor(img)
    padding_mode = padding_mode or "constant"
    if fill == nil then
        fill = 0
    end

    local p = _parse_pad_padding(padding)

    if padding_mode == "edge" then
        -- remap padding_mode str
        padding_mode = "replicate"
    elseif padding_mode == "symmetric" then
        -- route to another implementation
        return _pad_symmetric(img, p)
    end

    local need_squeeze = false
    if img.ndim < 4 then
        img = img:unsqueeze(1)
        need_squeeze = true
    end

    local out_dtype = img.dtype
    local need_cast = false
    -- if (padding_mode != "constant") and img.dtype not in (torch.float32, torch.float64):
    if padding_mode ~= "constant" and img.dtype ~= "float32" and img.dtype ~= "float64" then
        -- Here we temporary cast input tensor to float
        -- until pytorch issue is resolved :
        -- https://github.com/pytorch/pytorch/issues/40763
        need_cast = true
        img = img:to("float32")
    end

    -- if padding_mode in ("reflect", "replicate"):
    if padding_mode == "reflect" or padding_mode == "replicate" then
        -- img = torch_pad(img, p, mode=padding_mode)
        img = F.pad(img, p, padding_mode)
    else
        -- img = torch_pad(img, p, mode=padding_mode, value=float(fill))
        img = F.pad(img, p, padding_mode, fill + 0.0)
    end

    if need_squeeze then
        img = img:squeeze(1)
    end

    if need_cast then
        img = img:to(out_dtype)
    end

    return img
end

-- def _cast_squeeze_in(img: Tensor, req_dtypes: List[torch.dtype])
--         -> Tuple[Tensor, bool, bool, torch.dtype]:
local function _cast_squeeze_in(img, req_dtypes)
    local need_squeeze = false
    -- make image NCHW
    if img.ndim < 4 then
        img = img:unsqueeze(1)
        need_squeeze = true
    end

    local out_dtype = img.dtype
    local need_cast = false
    -- if out_dtype not in req_dtypes:
    local found = false
    for _, d in ipairs(req_dtypes) do found = found or d == out_dtype end
    if not found then
        need_cast = true
        local req_dtype = req_dtypes[1]
        img = img:to(req_dtype)
    end
    return img, need_cast, need_squeeze, out_dtype
end

-- def _cast_squeeze_out(img: Tensor, need_cast: bool, need_squeeze: bool,
--                       out_dtype: torch.dtype) -> Tensor:
local function _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)
    if need_squeeze then
        img = img:squeeze(1)
    end

    if need_cast then
        -- if out_dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
        if INT_DTYPES[out_dtype] then
            -- it is better to round before cast
            img = tide.round(img)
        end
        img = img:to(out_dtype)
    end

    return img
end

-- def _get_gaussian_kernel1d(kernel_size: int, sigma: float) -> Tensor:
local function _get_gaussian_kernel1d(kernel_size, sigma)
    local ksize_half = (kernel_size - 1) * 0.5

    -- x = torch.linspace(-ksize_half, ksize_half, steps=kernel_size)
    local x = tide.linspace(-ksize_half, ksize_half, kernel_size)
    -- pdf = torch.exp(-0.5 * (x / sigma).pow(2))
    local pdf = tide.exp(-0.5 * (x / sigma):pow(2))
    local kernel1d = pdf / pdf:sum()

    return kernel1d
end

-- def _get_gaussian_kernel2d(kernel_size, sigma, dtype, device) -> Tensor:
local function _get_gaussian_kernel2d(kernel_size, sigma, dtype, device)
    -- kernel1d_x = _get_gaussian_kernel1d(kernel_size[0], sigma[0]).to(device, dtype=dtype)
    local kernel1d_x = _get_gaussian_kernel1d(kernel_size[1], sigma[1]):to(device, dtype)
    local kernel1d_y = _get_gaussian_kernel1d(kernel_size[2], sigma[2]):to(device, dtype)
    -- kernel2d = torch.mm(kernel1d_y[:, None], kernel1d_x[None, :])
    local kernel2d = tide.mm(kernel1d_y[{ {}, tide.newaxis }], kernel1d_x[{ tide.newaxis, {} }])
    return kernel2d
end

-- def gaussian_blur(img: Tensor, kernel_size: List[int], sigma: List[float]) -> Tensor:
local function gaussian_blur(img, kernel_size, sigma)
    _assert_image_tensor(img)

    -- dtype = img.dtype if torch.is_floating_point(img) else torch.float32
    local dtype = img:is_floating_point() and img.dtype or "float32"
    local kernel = _get_gaussian_kernel2d(kernel_size, sigma, dtype, img.device)
    -- kernel = kernel.expand(img.shape[-3], 1, kernel.shape[0], kernel.shape[1])
    kernel = kernel:expand(img:size(-3), 1, kernel.shape[1], kernel.shape[2])

    local need_cast, need_squeeze, out_dtype
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, { kernel.dtype })

    -- padding = (left, right, top, bottom)
    -- padding = [kernel_size[0] // 2, kernel_size[0] // 2,
    --            kernel_size[1] // 2, kernel_size[1] // 2]
    local kx, ky = math.floor(kernel_size[1] / 2), math.floor(kernel_size[2] / 2)
    local padding = { kx, kx, ky, ky }
    -- img = torch_pad(img, padding, mode="reflect")
    img = F.pad(img, padding, "reflect")
    -- img = conv2d(img, kernel, groups=img.shape[-3])
    img = F.conv2d(img, kernel, { groups = img:size(-3) })

    img = _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)
    return img
end

-- def invert(img: Tensor) -> Tensor:
local function invert(img)
    _assert_image_tensor(img)
    _assert_channels(img, { 1, 3 })
    return _max_value(img.dtype) - img
end

-- def posterize(img: Tensor, bits: int) -> Tensor:
local function posterize(img, bits)
    _assert_image_tensor(img)
    if img.dtype ~= "uint8" then
        error("TypeError: Only torch.uint8 image tensors are supported, but found " .. img.dtype)
    end
    _assert_channels(img, { 1, 3 })
    -- mask = -int(2 ** (8 - bits))  # JIT-friendly for: ~(2 ** (8 - bits) - 1)
    local mask = -math.floor(2 ^ (8 - bits))
    -- return img & mask   (the method: `&` is Lua 5.3+)
    return img:bitwise_and(mask)
end

-- def solarize(img: Tensor, threshold: float) -> Tensor:
local function solarize(img, threshold)
    _assert_image_tensor(img)
    _assert_channels(img, { 1, 3 })
    if threshold > _max_value(img.dtype) then
        error("TypeError: Threshold should be less than bound of img.")
    end
    local inverted_img = invert(img)
    -- return torch.where(img >= threshold, inverted_img, img)
    return tide.where(img:ge(threshold), inverted_img, img)
end

-- def autocontrast(img: Tensor) -> Tensor:
local function autocontrast(img)
    _assert_image_tensor(img)
    _assert_channels(img, { 1, 3 })
    local bound = _max_value(img.dtype)
    local dtype = img:is_floating_point() and img.dtype or "float32"

    -- minimum = img.amin(dim=(-2, -1), keepdim=True).to(dtype)
    local minimum = img:amin({ -2, -1 }, true):to(dtype)
    local maximum = img:amax({ -2, -1 }, true):to(dtype)
    local scale = bound / (maximum - minimum)
    -- eq_idxs = torch.isfinite(scale).logical_not()
    local eq_idxs = tide.isfinite(scale):logical_not()
    minimum[eq_idxs] = 0.0
    scale[eq_idxs] = 1.0

    -- return ((img - minimum) * scale).clamp(0, bound).to(img.dtype)
    return ((img - minimum) * scale):clamp(0, bound):to(img.dtype)
end

-- def _scale_channel(img_chan: Tensor) -> Tensor:
-- (use_histc picks the CUDA branch; the CPU's is bincount)
local function _scale_channel(img_chan, use_histc)
    local hist
    -- if img_chan.is_cuda:
    if use_histc then
        -- hist = torch.histc(img_chan.to(torch.float32), bins=256, min=0, max=255)
        hist = tide.histc(img_chan:to("float32"), { bins = 256, min = 0, max = 255 })
    else
        -- hist = torch.bincount(img_chan.view(-1), minlength=256)
        -- (tide's bincount counts value v at index v from 1: pixel value k at k + 1, as
        -- PyTorch's 0-based hist[k])
        hist = tide.bincount(img_chan:view(-1):to("int64") + 1, { minlength = 256 })
    end

    -- nonzero_hist = hist[hist != 0]
    local nonzero_hist = hist[hist:ne(0)]
    -- step = torch.div(nonzero_hist[:-1].sum(), 255, rounding_mode="floor")
    local step = tide.div(nonzero_hist[{ { 1, -2 } }]:sum(), 255, { rounding_mode = "floor" })
    -- if step == 0:
    if step:item() == 0 then
        return img_chan
    end

    -- lut = torch.div(torch.cumsum(hist, 0) + torch.div(step, 2, rounding_mode="floor"),
    --                 step, rounding_mode="floor")
    local lut = tide.div(tide.cumsum(hist, 1) + tide.div(step, 2, { rounding_mode = "floor" }),
        step, { rounding_mode = "floor" })
    -- lut = torch.nn.functional.pad(lut, [1, 0])[:-1].clamp(0, 255)
    lut = F.pad(lut, { 1, 0 })[{ { 1, -2 } }]:clamp(0, 255)

    -- return lut[img_chan.to(torch.int64)].to(torch.uint8)
    return lut[img_chan:to("int64") + 1]:to("uint8")
end

-- def _equalize_single_image(img: Tensor) -> Tensor:
local function _equalize_single_image(img, use_histc)
    -- return torch.stack([_scale_channel(img[c]) for c in range(img.size(0))])
    local chans = {}
    for c = 1, img:size(1) do chans[c] = _scale_channel(img[c], use_histc) end
    return tide.stack(chans)
end

-- def equalize(img: Tensor) -> Tensor:
local function equalize(img, use_histc)
    _assert_image_tensor(img)
    if not (3 <= img.ndim and img.ndim <= 4) then
        error("TypeError: Input image tensor should have 3 or 4 dimensions, but found " .. img.ndim)
    end
    if img.dtype ~= "uint8" then
        error("TypeError: Only torch.uint8 image tensors are supported, but found " .. img.dtype)
    end
    _assert_channels(img, { 1, 3 })
    if img.ndim == 3 then
        return _equalize_single_image(img, use_histc)
    end
    -- return torch.stack([_equalize_single_image(x) for x in img])
    local xs = {}
    for k, x in ipairs(img:unbind()) do xs[k] = _equalize_single_image(x, use_histc) end
    return tide.stack(xs)
end

-- def normalize(tensor: Tensor, mean: List[float], std: List[float],
--               inplace: bool = False) -> Tensor:
local function normalize(tensor, mean, std, inplace)
    _assert_image_tensor(tensor)
    if not tensor:is_floating_point() then
        error("TypeError: Input tensor should be a float tensor. Got " .. tensor.dtype .. ".")
    end
    if not inplace then
        tensor = tensor:clone()
    end
    local dtype = tensor.dtype
    -- mean = torch.as_tensor(mean, dtype=dtype, device=tensor.device)
    mean = tide.as_tensor(mean, { dtype = dtype, device = tensor.device })
    std = tide.as_tensor(std, { dtype = dtype, device = tensor.device })
    -- if (std == 0).any():
    if std:eq(0):any():item() then
        error("ValueError: std evaluated to zero after conversion to " .. dtype
            .. ", leading to division by zero.")
    end
    if mean.ndim == 1 then
        mean = mean:view(-1, 1, 1)
    end
    if std.ndim == 1 then
        std = std:view(-1, 1, 1)
    end
    return tensor:sub_(mean):div_(std)
end

-- def erase(img: Tensor, i: int, j: int, h: int, w: int, v: Tensor,
--           inplace: bool = False) -> Tensor:
-- (i and j stay Python's 0-based offsets)
local function erase(img, i, j, h, w, v, inplace)
    _assert_image_tensor(img)
    if not inplace then
        img = img:clone()
    end
    -- img[..., i : i + h, j : j + w] = v
    img[{ "...", { i + 1, i + h }, { j + 1, j + w } }] = v
    return img
end

---------------------------------------------------------------------------------------------
-- the fixed images (PyTorch's side builds the same ones)
---------------------------------------------------------------------------------------------
-- U8 = ((torch.arange(180) * 37 + 11) % 256).view(2, 3, 5, 6)
local function images()
    local U8 = ((tide.arange(0, 180) * 37 + 11) % 256):view(2, 3, 5, 6)
    -- U8[0, :, 0, 0] = 100          # one gray pixel: rgb2hsv's eqc branch
    U8[{ 1, {}, 1, 1 }] = 100
    -- U8[1, 2] = 77                 # one constant channel: autocontrast's eq_idxs branch
    U8[{ 2, 3 }] = 77
    U8 = U8:to("uint8")
    -- F32 = U8.to(torch.float32) / 255.0
    local F32 = U8:to("float32") / 255.0
    -- EQ: 320 pixels a channel, so that equalize's step is not 0
    local n = tide.arange(0, 960)
    local EQ = (((n ^ 2) % 97 + (n % 13) * 11) % 256):view(3, 16, 20):to("uint8")
    return U8, F32, EQ
end

-- PyTorch 1.13's outputs: name, shape, dtype, sum, sum weighted by (flat index % 7 + 1)
local WANT = {
    { "u8_to_f32", {2, 3, 5, 6}, "float32", 83.968629293609411, 376.62745818821713 },
    { "f32_to_u8", {2, 3, 5, 6}, "uint8", 29749, 124810 },
    { "u8_to_i32", {2, 3, 5, 6}, "int32", 179616874496, 805641912320 },
    { "i32_to_u8", {2, 3, 5, 6}, "uint8", 21412, 96040 },
    { "vflip", {2, 3, 5, 6}, "uint8", 21412, 82380 },
    { "hflip", {2, 3, 5, 6}, "float32", 83.968629293609411, 328.82745841192082 },
    { "crop_in", {2, 3, 3, 3}, "uint8", 5999, 24279 },
    { "crop_pad", {2, 3, 4, 5}, "float32", 27.019608411937952, 109.03529633395374 },
    { "gray_u8", {2, 1, 5, 6}, "uint8", 7619, 31981 },
    { "gray3_f32", {2, 3, 5, 6}, "float32", 90.003252893686295, 363.30686330795288 },
    { "bright_u8", {2, 3, 5, 6}, "uint8", 30874, 130983 },
    { "bright_f32", {2, 3, 5, 6}, "float32", 50.381179477553815, 225.97648335294798 },
    { "contrast_u8", {2, 3, 5, 6}, "uint8", 20557, 96909 },
    { "contrast_f32", {2, 3, 5, 6}, "float32", 87.58940726518631, 365.14814436435699 },
    { "sat_u8", {2, 3, 5, 6}, "uint8", 22341, 93047 },
    { "sat_f32", {2, 3, 5, 6}, "float32", 77.487608641386032, 370.25204914808273 },
    { "hsv", {2, 3, 5, 6}, "float32", 122.40636372566223, 499.40796121954918 },
    { "hue_f32", {2, 3, 5, 6}, "float32", 94.243133280891925, 409.57960293954238 },
    { "hue_u8", {2, 3, 5, 6}, "uint8", 22083, 77702 },
    { "gamma_u8", {2, 3, 5, 6}, "uint8", 29749, 124810 },
    { "gamma_f32", {2, 3, 5, 6}, "float32", 53.258786111845438, 270.82161981920854 },
    { "invert_u8", {2, 3, 5, 6}, "uint8", 24488, 86285 },
    { "invert_f32", {2, 3, 5, 6}, "float32", 96.031370282173157, 338.37253946065903 },
    { "posterize", {2, 3, 5, 6}, "uint8", 18720, 85280 },
    { "solarize_u8", {2, 3, 5, 6}, "uint8", 11998, 42745 },
    { "solarize_f32", {2, 3, 5, 6}, "float32", 47.050980024505407, 167.62744841305539 },
    { "autocontrast_u8", {2, 3, 5, 6}, "uint8", 21258, 96699 },
    { "autocontrast_f32", {2, 3, 5, 6}, "float32", 83.627576042897999, 380.25235823635012 },
    { "pad_constant_u8", {2, 3, 8, 10}, "uint8", 24112, 94948 },
    { "pad_constant_f32", {3, 7, 10}, "float32", 104.92549108387902, 420.57255258644 },
    { "pad_reflect_u8", {2, 3, 8, 10}, "uint8", 56145, 221442 },
    { "pad_reflect_f32", {3, 7, 10}, "float32", 104.10980597604066, 420.93334168428555 },
    { "pad_edge_u8", {2, 3, 8, 10}, "uint8", 57006, 227277 },
    { "pad_edge_f32", {3, 7, 10}, "float32", 105.29019812960178, 424.69412602204829 },
    { "pad_symmetric_u8", {2, 3, 8, 10}, "uint8", 58016, 231864 },
    { "pad_symmetric_f32", {3, 7, 10}, "float32", 106.22353147622198, 421.50589064415544 },
    { "pad_sym_neg", {2, 3, 6, 6}, "float32", 101.72549245413393, 415.21569533692673 },
    { "kernel1d", {3}, "float32", 1.0000000596046448, 2.0000001192092896 },
    { "kernel2d", {5, 3}, "float32", 1, 3.7654686272144318 },
    { "blur_f32", {2, 3, 5, 6}, "float32", 83.331800445914268, 350.40215919911861 },
    { "blur_u8", {3, 5, 6}, "uint8", 9848, 42346 },
    { "normalize", {2, 3, 5, 6}, "float32", 14.089481030590832, 247.91336248163134 },
    { "erase", {2, 3, 5, 6}, "float32", 75.827452648896724, 344.0156929041259 },
    { "erase_u8", {2, 3, 5, 6}, "uint8", 17704, 79703 },
    { "equalize_big", {3, 16, 20}, "uint8", 146235, 581861 },
    { "equalize_big_histc", {3, 16, 20}, "uint8", 146235, 581861 },
}
local WANT_BY = {}
for _, w in ipairs(WANT) do WANT_BY[w[1]] = w end

-- shape, dtype and the two sums of x against PyTorch's (exact for integer outputs)
local function check(name, x)
    local w = WANT_BY[name]
    assert(w, name)
    local shape = {}
    for d = 1, x.ndim do shape[d] = x:size(d) end
    assert.are.same(w[2], shape)
    assert.are.equal(w[3], x.dtype)
    local xd = x:to("float64")
    local wt = (tide.arange(0, x:numel()) % 7 + 1):view(x:size()):to("float64")
    local s, ws = xd:sum():item(), (xd * wt):sum():item()
    local tol = x:is_floating_point() and 1e-5 or 1e-12
    assert(ported.close(s, w[4], tol), string.format("%s: sum %.10g, PyTorch %.10g", name, s, w[4]))
    assert(ported.close(ws, w[5], tol),
        string.format("%s: weighted sum %.10g, PyTorch %.10g", name, ws, w[5]))
end

describe("ported torchvision functional_tensor.py (v0.14)", function()
    local U8, F32, EQ = images()

    it("convert_image_dtype: uint8 <-> float32 with the eps, int up and down", function()
        check("u8_to_f32", convert_image_dtype(U8, "float32"))
        check("f32_to_u8", convert_image_dtype(F32:sqrt(), "uint8"))
        check("u8_to_i32", convert_image_dtype(U8, "int32"))
        check("i32_to_u8", convert_image_dtype(convert_image_dtype(U8, "int32") + 12345, "uint8"))
        assert.has_error(function() convert_image_dtype(F32, "int64") end,
            "RuntimeError: The cast from float32 to int64 cannot be performed safely.")
    end)

    it("vflip, hflip, crop (inside, and past the edges through pad)", function()
        check("vflip", vflip(U8))
        check("hflip", hflip(F32))
        check("crop_in", crop(U8, 1, 2, 3, 3))
        check("crop_pad", crop(F32, -1, 3, 4, 5))
        assert.has_error(function() vflip(tide.zeros(3)) end,
            "TypeError: Tensor is not a torch image.")
    end)

    it("rgb_to_grayscale, adjust_brightness / contrast / saturation (_blend)", function()
        check("gray_u8", rgb_to_grayscale(U8))
        check("gray3_f32", rgb_to_grayscale(F32, 3))
        check("bright_u8", adjust_brightness(U8, 1.7))
        check("bright_f32", adjust_brightness(F32, 0.6))
        check("contrast_u8", adjust_contrast(U8, 1.5))
        check("contrast_f32", adjust_contrast(F32, 0.4))
        check("sat_u8", adjust_saturation(U8, 0.3))
        check("sat_f32", adjust_saturation(F32, 2.0))
    end)

    it("adjust_hue through _rgb2hsv / _hsv2rgb (where, fmod, one-hot mask, einsum)", function()
        check("hsv", _rgb2hsv(F32))
        check("hue_f32", adjust_hue(F32, 0.2))
        check("hue_u8", adjust_hue(U8, -0.35))
        -- the gray pixel: s = 0 and h = 0, and _hsv2rgb gives it back
        local hsv = _rgb2hsv(F32)
        assert.are.equal(0, hsv[{ 1, 1, 1, 1 }]:item())
        assert.are.equal(0, hsv[{ 1, 2, 1, 1 }]:item())
        assert.is_true(tide.allclose(_hsv2rgb(hsv), F32, 1e-5, 1e-6))
    end)

    it("adjust_gamma, invert, posterize, solarize, autocontrast", function()
        check("gamma_u8", adjust_gamma(U8, 0.5))
        check("gamma_f32", adjust_gamma(F32, 2.2, 1.1))
        check("invert_u8", invert(U8))
        check("invert_f32", invert(F32))
        check("posterize", posterize(U8, 3))
        check("solarize_u8", solarize(U8, 128))
        check("solarize_f32", solarize(F32, 0.5))
        check("autocontrast_u8", autocontrast(U8))
        check("autocontrast_f32", autocontrast(F32))
    end)

    it("equalize: _scale_channel by bincount and by histc, cumsum, the lut gather", function()
        check("equalize_big", equalize(EQ))
        check("equalize_big_histc", equalize(EQ, true))
        -- 30 pixels a channel: step is 0 and each channel comes back as it was
        assert.is_true(tide.equal(equalize(U8), U8))
    end)

    it("pad: constant, reflect, edge, symmetric (and symmetric's negative crop)", function()
        for _, m in ipairs({ "constant", "reflect", "edge", "symmetric" }) do
            check("pad_" .. m .. "_u8", pad(U8, { 1, 2, 3, 1 }, 9, m))
            check("pad_" .. m .. "_f32", pad(F32[1], { 2, 1 }, 0.5, m))
        end
        check("pad_sym_neg", pad(F32, { -1, 2, 1, -1 }, nil, "symmetric"))
    end)

    it("gaussian_blur: kernels, _cast_squeeze_in/out, reflect pad and grouped conv2d", function()
        check("kernel1d", _get_gaussian_kernel1d(3, 0.8))
        check("kernel2d", _get_gaussian_kernel2d({ 3, 5 }, { 0.8, 1.5 }, "float32", F32.device))
        check("blur_f32", gaussian_blur(F32, { 3, 5 }, { 0.8, 1.5 }))
        check("blur_u8", gaussian_blur(U8[2], { 3, 3 }, { 1.0, 1.0 }))
    end)

    it("normalize and erase", function()
        check("normalize", normalize(F32, { 0.485, 0.456, 0.406 }, { 0.229, 0.224, 0.225 }))
        -- normalize works on a clone
        check("u8_to_f32", F32)
        local v = tide.tensor({ { { 0.1 } }, { { 0.2 } }, { { 0.3 } } })
        check("erase", erase(F32, 1, 2, 2, 3, v))
        check("erase_u8", erase(U8, 0, 0, 3, 2, tide.tensor(7, { dtype = "uint8" })))
        assert.has_error(function() normalize(U8, { 0.5 }, { 0.5 }) end,
            "TypeError: Input tensor should be a float tensor. Got uint8.")
        assert.has_error(function() normalize(F32, { 0.5 }, { 0 }) end,
            "ValueError: std evaluated to zero after conversion to float32, leading to division"
            .. " by zero.")
    end)
end)
