-- ported_scripts150_spec.lua — kornia/kornia (HEAD): kornia/filters/kernels.py (gaussian,
-- get_gaussian_kernel1d / 2d, get_box_kernel1d / 2d, get_binary_kernel2d, the sobel and diff
-- kernels, get_spatial_gradient_kernel2d for order 1, normalize_kernel2d,
-- get_laplacian_kernel2d), kornia/filters/filter.py (_compute_padding, filter2d with its four
-- border types, normalized, 'same' / 'valid', 'corr' / 'conv'; filter2d_separable), blur.py
-- (box_blur), gaussian.py (gaussian_blur2d), sobel.py (spatial_gradient, sobel), laplacian.py,
-- median.py (median_blur) and kornia/metrics/ssim.py (ssim) with kornia/losses/ssim.py
-- (ssim_loss), ported line for line on 2 x 3 x 7 x 8 images built from formulas, checked
-- against the same code run on PyTorch 1.13. The Python line stands above each Lua line that
-- differs from it. Simplified: KORNIA_CHECK* guards are error() calls with kornia's text
-- (the shape checks name the expected shape), device= is dropped (tensors stay on the input's
-- device), order 2 kernels and the nn.Module wrappers are left out.
local tide = require("tide")
local F = tide.nn.functional

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

-- Python's a // b (Lua 5.1 and LuaJIT have no // operator)
local function floordiv(a, b)
    return math.floor(a / b)
end

-- KORNIA_CHECK(condition, msg)
local function KORNIA_CHECK(cond, msg)
    if not cond then error(msg, 2) end
end

---------------------------------------------------------------------------------------------
-- 1. kornia/filters/kernels.py
---------------------------------------------------------------------------------------------
-- def _check_kernel_size(kernel_size, min_value: int = 0, allow_even: bool = False) -> None:
local function _check_kernel_size(kernel_size, min_value, allow_even)
    min_value = min_value or 0
    -- if isinstance(kernel_size, int):
    if type(kernel_size) == "number" then
        kernel_size = { kernel_size }
    end
    local fmt = allow_even and "even or odd" or "odd"
    for _, size in ipairs(kernel_size) do
        -- isinstance(size, int) and (((size % 2 == 1) or allow_even) and size > min_value),
        KORNIA_CHECK(math.floor(size) == size
            and ((size % 2 == 1 or allow_even) and size > min_value),
            ("Kernel size must be an %s integer bigger than %d. Gotcha %s on %s"):format(
                fmt, min_value, tostring(size), table.concat(kernel_size, ", ")))
    end
end

-- def _unpack_2d_ks(kernel_size: tuple[int, int] | int) -> tuple[int, int]:
local function _unpack_2d_ks(kernel_size)
    local ky, kx
    if type(kernel_size) == "number" then
        ky, kx = kernel_size, kernel_size
    else
        KORNIA_CHECK(#kernel_size == 2, "2D Kernel size should have a length of 2.")
        ky, kx = kernel_size[1], kernel_size[2]
    end
    return ky, kx
end

-- def normalize_kernel2d(input: torch.Tensor) -> torch.Tensor:
local function normalize_kernel2d(input)
    -- KORNIA_CHECK_SHAPE(input, ["*", "H", "W"])
    KORNIA_CHECK(input.ndim >= 2, "Shape dimension mismatch: expected [*, H, W]")
    local norm = input:abs():sum(-1):sum(-1)
    -- return input / (norm[..., None, None])
    return input / norm[{ "...", tide.newaxis, tide.newaxis }]
end

-- def gaussian(window_size, sigma, *, mean=None, device=None, dtype=None) -> torch.Tensor:
local function gaussian(window_size, sigma, opts)
    opts = opts or {}
    local mean = opts.mean
    -- if isinstance(sigma, float):
    if type(sigma) == "number" then
        -- sigma = torch.tensor([[sigma]], device=device, dtype=dtype)
        sigma = tide.tensor({ { sigma } }, { dtype = opts.dtype })
    end
    -- KORNIA_CHECK_IS_TENSOR(sigma); KORNIA_CHECK_SHAPE(sigma, ["B", "1"])
    KORNIA_CHECK(tide.is_tensor(sigma), "Not a Tensor type. Got: " .. type(sigma))
    KORNIA_CHECK(sigma.ndim == 2 and sigma:size(2) == 1,
        "Shape dimension mismatch: expected [B, 1]")
    -- batch_size = sigma.shape[0]
    local batch_size = sigma:size(1)
    -- mean = float(window_size // 2) if mean is None else mean
    if mean == nil then mean = floordiv(window_size, 2) end
    if type(mean) == "number" then
        mean = tide.tensor({ { mean } }, { dtype = sigma.dtype })
    end
    -- x = (torch.arange(window_size, device=sigma.device, dtype=sigma.dtype) - mean)
    --     .expand(batch_size, -1)
    local x = (tide.arange(window_size, { dtype = sigma.dtype }) - mean):expand(batch_size, -1)
    if window_size % 2 == 0 then
        x = x + 0.5
    end
    -- gauss = torch.exp(-x.pow(2.0) / (2 * sigma.pow(2.0)))
    local gauss = tide.exp(-x:pow(2.0) / (2 * sigma:pow(2.0)))
    -- return gauss / gauss.sum(-1, keepdim=True)
    return gauss / gauss:sum(-1, true)
end

-- def get_box_kernel1d(kernel_size: int, *, device=None, dtype=None) -> torch.Tensor:
local function get_box_kernel1d(kernel_size, opts)
    -- scale = torch.tensor(1.0 / kernel_size, device=device, dtype=dtype)
    local scale = tide.tensor(1.0 / kernel_size, { dtype = (opts or {}).dtype })
    return scale:expand(1, kernel_size)
end

-- def get_box_kernel2d(kernel_size, *, device=None, dtype=None) -> torch.Tensor:
local function get_box_kernel2d(kernel_size, opts)
    local ky, kx = _unpack_2d_ks(kernel_size)
    local scale = tide.tensor(1.0 / (kx * ky), { dtype = (opts or {}).dtype })
    return scale:expand(1, ky, kx)
end

-- def get_binary_kernel2d(window_size, *, device=None, dtype=torch.float32) -> torch.Tensor:
local function get_binary_kernel2d(window_size, opts)
    local ky, kx = _unpack_2d_ks(window_size)
    local window_range = kx * ky
    -- kernel = torch.zeros((window_range, window_range), device=device, dtype=dtype)
    local kernel = tide.zeros({ window_range, window_range }, { dtype = (opts or {}).dtype })
    -- idx = torch.arange(window_range, device=device)  (1-based here)
    local idx = tide.arange(1, window_range + 1)
    -- kernel[idx, idx] += 1.0
    kernel[{ idx, idx }] = kernel[{ idx, idx }] + 1.0
    return kernel:view(window_range, 1, ky, kx)
end

-- def get_sobel_kernel_3x3(*, device=None, dtype=None) -> torch.Tensor:
local function get_sobel_kernel_3x3(opts)
    return tide.tensor({ { -1.0, 0.0, 1.0 }, { -2.0, 0.0, 2.0 }, { -1.0, 0.0, 1.0 } }, opts)
end

-- def get_diff_kernel_3x3(*, device=None, dtype=None) -> torch.Tensor:
local function get_diff_kernel_3x3(opts)
    return tide.tensor({ { -0.0, 0.0, 0.0 }, { -1.0, 0.0, 1.0 }, { -0.0, 0.0, 0.0 } }, opts)
end

-- def get_sobel_kernel2d(*, device=None, dtype=None) -> torch.Tensor:
local function get_sobel_kernel2d(opts)
    local kernel_x = get_sobel_kernel_3x3(opts)
    -- kernel_y = kernel_x.transpose(0, 1)
    local kernel_y = kernel_x:transpose(1, 2)
    -- return torch.stack([kernel_x, kernel_y])
    return tide.stack({ kernel_x, kernel_y })
end

-- def get_diff_kernel2d(*, device=None, dtype=None) -> torch.Tensor:
local function get_diff_kernel2d(opts)
    local kernel_x = get_diff_kernel_3x3(opts)
    local kernel_y = kernel_x:transpose(1, 2)
    return tide.stack({ kernel_x, kernel_y })
end

-- def get_spatial_gradient_kernel2d(mode, order, *, device=None, dtype=None) -> torch.Tensor:
local function get_spatial_gradient_kernel2d(mode, order, opts)
    -- KORNIA_CHECK(mode.lower() in {"sobel", "diff"}, f"Mode should be `sobel` or `diff`. ...")
    KORNIA_CHECK(mode:lower() == "sobel" or mode:lower() == "diff",
        "Mode should be `sobel` or `diff`. Got " .. mode)
    KORNIA_CHECK(order == 1 or order == 2, "Order should be 1 or 2. Got " .. tostring(order))
    local kernel
    if mode == "sobel" and order == 1 then
        kernel = get_sobel_kernel2d(opts)
    elseif mode == "diff" and order == 1 then
        kernel = get_diff_kernel2d(opts)
    else
        -- the order 2 kernels (5x5 sobel, 3x3 diff) are not ported
        error(("Not implemented for order %d on mode %s"):format(order, mode))
    end
    return kernel
end

-- def get_gaussian_kernel1d(kernel_size, sigma, force_even=False, *, device=None, dtype=None):
local function get_gaussian_kernel1d(kernel_size, sigma, force_even, opts)
    _check_kernel_size(kernel_size, 0, force_even)
    return gaussian(kernel_size, sigma, opts)
end

-- def get_gaussian_kernel2d(kernel_size, sigma, force_even=False, *, device=None, dtype=None):
local function get_gaussian_kernel2d(kernel_size, sigma, force_even, opts)
    opts = opts or {}
    -- if isinstance(sigma, tuple):  (a Lua list of two numbers)
    if not tide.is_tensor(sigma) and type(sigma) == "table" then
        -- sigma = torch.tensor([sigma], device=device, dtype=dtype)
        sigma = tide.tensor({ sigma }, { dtype = opts.dtype })
    end
    KORNIA_CHECK(tide.is_tensor(sigma), "Not a Tensor type. Got: " .. type(sigma))
    KORNIA_CHECK(sigma.ndim == 2 and sigma:size(2) == 2,
        "Shape dimension mismatch: expected [B, 2]")
    local ksize_y, ksize_x = _unpack_2d_ks(kernel_size)
    -- sigma_y, sigma_x = sigma[:, 0, None], sigma[:, 1, None]
    local sigma_y, sigma_x = sigma[{ {}, 1, tide.newaxis }], sigma[{ {}, 2, tide.newaxis }]
    -- kernel_y = get_gaussian_kernel1d(ksize_y, sigma_y, force_even, ...)[..., None]
    local kernel_y = get_gaussian_kernel1d(ksize_y, sigma_y, force_even, opts)[{ "...",
        tide.newaxis }]
    local kernel_x = get_gaussian_kernel1d(ksize_x, sigma_x, force_even, opts)[{ "...",
        tide.newaxis }]
    return kernel_y * kernel_x:view(-1, 1, ksize_x)
end

-- def get_laplacian_kernel2d(kernel_size, *, device=None, dtype=torch.float32) -> torch.Tensor:
local function get_laplacian_kernel2d(kernel_size, opts)
    local ky, kx = _unpack_2d_ks(kernel_size)
    _check_kernel_size({ ky, kx })
    -- kernel = torch.ones((ky, kx), device=device, dtype=dtype)
    local kernel = tide.ones({ ky, kx }, { dtype = (opts or {}).dtype })
    -- mid_x = kx // 2
    local mid_x = floordiv(kx, 2)
    -- mid_y = ky // 2
    local mid_y = floordiv(ky, 2)
    -- kernel[mid_y, mid_x] = 1 - kernel.sum()  (1-based)
    kernel[{ mid_y + 1, mid_x + 1 }] = 1 - kernel:sum()
    return kernel
end

---------------------------------------------------------------------------------------------
-- 2. kornia/filters/filter.py
---------------------------------------------------------------------------------------------
local _VALID_BORDERS = { constant = true, reflect = true, replicate = true, circular = true }
local _VALID_PADDING = { valid = true, same = true }
local _VALID_BEHAVIOUR = { conv = true, corr = true }

-- def _compute_padding(kernel_size: list[int]) -> list[int]:
local function _compute_padding(kernel_size)
    if #kernel_size < 2 then
        -- raise AssertionError(kernel_size)
        error("AssertionError: " .. table.concat(kernel_size, ", "))
    end
    -- computed = [k - 1 for k in kernel_size]
    local computed = {}
    for i, k in ipairs(kernel_size) do computed[i] = k - 1 end
    -- out_padding = 2 * len(kernel_size) * [0]
    local out_padding = {}
    -- for i in range(len(kernel_size)):  (i 0-based as in Python)
    for i = 0, #kernel_size - 1 do
        -- computed_tmp = computed[-(i + 1)]
        local computed_tmp = computed[#computed - i]
        -- pad_front = computed_tmp // 2
        local pad_front = floordiv(computed_tmp, 2)
        local pad_rear = computed_tmp - pad_front
        -- out_padding[2 * i + 0] = pad_front
        out_padding[2 * i + 1] = pad_front
        out_padding[2 * i + 2] = pad_rear
    end
    return out_padding
end

-- def filter2d(input, kernel, border_type="reflect", normalized=False, padding="same",
--              behaviour="corr") -> torch.Tensor:
local function filter2d(input, kernel, border_type, normalized, padding, behaviour)
    border_type, padding = border_type or "reflect", padding or "same"
    behaviour = behaviour or "corr"
    -- KORNIA_CHECK_IS_TENSOR(input); KORNIA_CHECK_SHAPE(input, ["B", "C", "H", "W"])
    KORNIA_CHECK(tide.is_tensor(input), "Not a Tensor type. Got: " .. type(input))
    KORNIA_CHECK(input.ndim == 4, "Shape dimension mismatch: expected [B, C, H, W]")
    KORNIA_CHECK(tide.is_tensor(kernel), "Not a Tensor type. Got: " .. type(kernel))
    KORNIA_CHECK(kernel.ndim == 3, "Shape dimension mismatch: expected [B, H, W]")
    KORNIA_CHECK(_VALID_BORDERS[tostring(border_type):lower()],
        ("Invalid border, %s. Expected one of %s"):format(border_type,
            "{'constant', 'reflect', 'replicate', 'circular'}"))
    KORNIA_CHECK(_VALID_PADDING[tostring(padding):lower()],
        ("Invalid padding mode, %s. Expected one of {'valid', 'same'}"):format(padding))
    KORNIA_CHECK(_VALID_BEHAVIOUR[tostring(behaviour):lower()],
        ("Invalid padding mode, %s. Expected one of {'conv', 'corr'}"):format(behaviour))

    -- prepare kernel
    -- b, c, h, w = input.shape
    local b, c, h, w = input:size(1), input:size(2), input:size(3), input:size(4)
    local tmp_kernel
    if tostring(behaviour):lower() == "conv" then
        -- tmp_kernel = kernel.flip((-2, -1))[:, None, ...].to(device=input.device,
        --                                                  dtype=input.dtype)
        tmp_kernel = kernel:flip({ -2, -1 })[{ {}, tide.newaxis, "..." }]:to(input.dtype)
    else
        -- tmp_kernel = kernel[:, None, ...].to(device=input.device, dtype=input.dtype)
        tmp_kernel = kernel[{ {}, tide.newaxis, "..." }]:to(input.dtype)
    end

    if normalized then
        tmp_kernel = normalize_kernel2d(tmp_kernel)
    end

    tmp_kernel = tmp_kernel:expand(-1, c, -1, -1)

    -- height, width = tmp_kernel.shape[-2:]
    local height, width = tmp_kernel:size(-2), tmp_kernel:size(-1)

    -- pad the input tensor
    if padding == "same" then
        local padding_shape = _compute_padding({ height, width })
        -- input = F.pad(input, padding_shape, mode=border_type)
        input = F.pad(input, padding_shape, border_type)
    end

    -- kernel and input tensor reshape to align element-wise or batch-wise params
    tmp_kernel = tmp_kernel:reshape(-1, 1, height, width)
    input = input:view(-1, tmp_kernel:size(1), input:size(-2), input:size(-1))

    -- convolve the tensor with the kernel.
    -- output = F.conv2d(input, tmp_kernel, groups=tmp_kernel.size(0), padding=0, stride=1)
    local output = F.conv2d(input, tmp_kernel, { groups = tmp_kernel:size(1), padding = 0,
        stride = 1 })

    local out
    if padding == "same" then
        out = output:view(b, c, h, w)
    else
        out = output:view(b, c, h - height + 1, w - width + 1)
    end
    return out
end

-- def filter2d_separable(input, kernel_x, kernel_y, border_type="reflect", normalized=False,
--                        padding="same") -> torch.Tensor:
local function filter2d_separable(input, kernel_x, kernel_y, border_type, normalized, padding)
    -- out_x = filter2d(input, kernel_x[..., None, :], border_type, normalized, padding)
    local out_x = filter2d(input, kernel_x[{ "...", tide.newaxis, {} }], border_type, normalized,
        padding)
    -- out = filter2d(out_x, kernel_y[..., None], border_type, normalized, padding)
    local out = filter2d(out_x, kernel_y[{ "...", tide.newaxis }], border_type, normalized, padding)
    return out
end

---------------------------------------------------------------------------------------------
-- 3. blur.py, gaussian.py, sobel.py, laplacian.py, median.py
---------------------------------------------------------------------------------------------
-- def box_blur(input, kernel_size, border_type="reflect", separable=False) -> torch.Tensor:
local function box_blur(input, kernel_size, border_type, separable)
    border_type = border_type or "reflect"
    KORNIA_CHECK(tide.is_tensor(input), "Not a Tensor type. Got: " .. type(input))
    local out
    if separable then
        local ky, kx = _unpack_2d_ks(kernel_size)
        -- kernel_y = get_box_kernel1d(ky, device=input.device, dtype=input.dtype)
        local kernel_y = get_box_kernel1d(ky, { dtype = input.dtype })
        local kernel_x = get_box_kernel1d(kx, { dtype = input.dtype })
        out = filter2d_separable(input, kernel_x, kernel_y, border_type)
    else
        local kernel = get_box_kernel2d(kernel_size, { dtype = input.dtype })
        out = filter2d(input, kernel, border_type)
    end
    return out
end

-- def gaussian_blur2d(input, kernel_size, sigma, border_type="reflect", separable=True):
local function gaussian_blur2d(input, kernel_size, sigma, border_type, separable)
    border_type = border_type or "reflect"
    if separable == nil then separable = true end
    KORNIA_CHECK(tide.is_tensor(input), "Not a Tensor type. Got: " .. type(input))
    KORNIA_CHECK(input.ndim == 4, "Shape dimension mismatch: expected [B, C, H, W]")
    _check_kernel_size(kernel_size, 0)
    -- if isinstance(sigma, tuple):
    if not tide.is_tensor(sigma) and type(sigma) == "table" then
        -- sigma = torch.tensor([sigma], device=input.device, dtype=input.dtype)
        sigma = tide.tensor({ sigma }, { dtype = input.dtype })
    else
        KORNIA_CHECK(tide.is_tensor(sigma), "Not a Tensor type. Got: " .. type(sigma))
        -- sigma = sigma.to(device=input.device, dtype=input.dtype)
        sigma = sigma:to(input.dtype)
    end
    KORNIA_CHECK(sigma.ndim == 2 and sigma:size(2) == 2,
        "Shape dimension mismatch: expected [B, 2]")
    -- positive = bool((sigma > 0).all())
    -- (Lua's > must return a boolean, so the elementwise compare is spelled sigma:gt(0))
    local positive = sigma:gt(0):all():item()
    KORNIA_CHECK(positive, "sigma must be positive, got " .. tostring(sigma))

    local out
    if separable then
        local ky, kx = _unpack_2d_ks(kernel_size)
        local bs = sigma:size(1)
        -- kernel_x = get_gaussian_kernel1d(kx, sigma[:, 1].view(bs, 1))
        local kernel_x = get_gaussian_kernel1d(kx, sigma[{ {}, 2 }]:view(bs, 1))
        local kernel_y = get_gaussian_kernel1d(ky, sigma[{ {}, 1 }]:view(bs, 1))
        out = filter2d_separable(input, kernel_x, kernel_y, border_type)
    else
        local kernel = get_gaussian_kernel2d(kernel_size, sigma)
        out = filter2d(input, kernel, border_type)
    end
    return out
end

-- def spatial_gradient(input, mode="sobel", order=1, normalized=True) -> torch.Tensor:
local function spatial_gradient(input, mode, order, normalized)
    mode, order = mode or "sobel", order or 1
    if normalized == nil then normalized = true end
    KORNIA_CHECK(tide.is_tensor(input), "Not a Tensor type. Got: " .. type(input))
    KORNIA_CHECK(input.ndim == 4, "Shape dimension mismatch: expected [B, C, H, W]")
    -- allocate kernel
    local kernel = get_spatial_gradient_kernel2d(mode, order, { dtype = input.dtype })
    if normalized then
        kernel = normalize_kernel2d(kernel)
    end

    -- prepare kernel
    local b, c, h, w = input:size(1), input:size(2), input:size(3), input:size(4)
    -- tmp_kernel = kernel[:, None, ...]
    local tmp_kernel = kernel[{ {}, tide.newaxis, "..." }]

    -- Pad with "replicate for spatial dims, but with torch.zeros for channel
    -- spatial_pad = [kernel.size(1) // 2, kernel.size(1) // 2, kernel.size(2) // 2, ...]
    local spatial_pad = { floordiv(kernel:size(2), 2), floordiv(kernel:size(2), 2),
        floordiv(kernel:size(3), 2), floordiv(kernel:size(3), 2) }
    local out_channels = order == 2 and 3 or 2
    local padded_inp = F.pad(input:reshape(b * c, 1, h, w), spatial_pad, "replicate")
    local out = F.conv2d(padded_inp, tmp_kernel, { groups = 1, padding = 0, stride = 1 })
    return out:reshape(b, c, out_channels, h, w)
end

-- def sobel(input, normalized=True, eps=1e-6) -> torch.Tensor:
local function sobel(input, normalized, eps)
    if normalized == nil then normalized = true end
    eps = eps or 1e-6
    KORNIA_CHECK(tide.is_tensor(input), "Not a Tensor type. Got: " .. type(input))
    KORNIA_CHECK(input.ndim == 4, "Shape dimension mismatch: expected [B, C, H, W]")
    -- comput the x/y gradients
    local edges = spatial_gradient(input, nil, nil, normalized)
    -- unpack the edges
    -- gx: torch.Tensor = edges[:, :, 0]
    local gx = edges[{ {}, {}, 1 }]
    local gy = edges[{ {}, {}, 2 }]
    -- compute gradient maginitude
    local magnitude = tide.sqrt(gx * gx + gy * gy + eps)
    return magnitude
end

-- def laplacian(input, kernel_size, border_type="reflect", normalized=True) -> torch.Tensor:
local function laplacian(input, kernel_size, border_type, normalized)
    border_type = border_type or "reflect"
    if normalized == nil then normalized = true end
    -- kernel = get_laplacian_kernel2d(kernel_size, device=input.device,
    --                                 dtype=input.dtype)[None, ...]
    local kernel = get_laplacian_kernel2d(kernel_size, { dtype = input.dtype })[{ tide.newaxis,
        "..." }]
    if normalized then
        kernel = normalize_kernel2d(kernel)
    end
    return filter2d(input, kernel, border_type)
end

-- def _compute_zero_padding(kernel_size) -> tuple[int, int]:
local function _compute_zero_padding(kernel_size)
    local ky, kx = _unpack_2d_ks(kernel_size)
    -- return (ky - 1) // 2, (kx - 1) // 2
    return { floordiv(ky - 1, 2), floordiv(kx - 1, 2) }
end

-- def median_blur(input, kernel_size) -> torch.Tensor:
local function median_blur(input, kernel_size)
    KORNIA_CHECK(tide.is_tensor(input), "Not a Tensor type. Got: " .. type(input))
    KORNIA_CHECK(input.ndim == 4, "Shape dimension mismatch: expected [B, C, H, W]")
    local ky, kx = _unpack_2d_ks(kernel_size)
    local padding = _compute_zero_padding(kernel_size)
    -- prepare kernel
    local kernel = get_binary_kernel2d(kernel_size, { dtype = input.dtype })
    local b, c, h, w = input:size(1), input:size(2), input:size(3), input:size(4)
    -- map the local window to single vector
    -- features = F.conv2d(input.reshape(b * c, 1, h, w), kernel, padding=padding, stride=1)
    local features = F.conv2d(input:reshape(b * c, 1, h, w), kernel, { padding = padding,
        stride = 1 })
    features = features:view(b, c, ky * kx, h, w) -- BxCx(K_h * K_w)xHxW
    -- compute the median along the feature axis
    -- return features.median(dim=2)[0]
    return (features:median(3))
end

---------------------------------------------------------------------------------------------
-- 4. kornia/metrics/ssim.py and kornia/losses/ssim.py
---------------------------------------------------------------------------------------------
-- def _crop(img: torch.Tensor, cropping_shape: List[int]) -> torch.Tensor:
local function _crop(img, cropping_shape)
    -- return torch.nn.functional.pad(img, (-cropping_shape[2], -cropping_shape[3],
    --                                      -cropping_shape[0], -cropping_shape[1]))
    return F.pad(img, { -cropping_shape[3], -cropping_shape[4], -cropping_shape[1],
        -cropping_shape[2] })
end

-- def ssim(img1, img2, window_size, max_val=1.0, eps=1e-12, padding="same") -> torch.Tensor:
local function ssim(img1, img2, window_size, max_val, eps, padding)
    max_val, eps, padding = max_val or 1.0, eps or 1e-12, padding or "same"
    if not tide.is_tensor(img1) then
        -- raise TypeError(f"Input img1 type is not a torch.Tensor. Got {type(img1)}")
        error("Input img1 type is not a torch.Tensor. Got " .. type(img1))
    end
    if not tide.is_tensor(img2) then
        error("Input img2 type is not a torch.Tensor. Got " .. type(img2))
    end
    if type(max_val) ~= "number" then
        error("Input max_val type is not a float. Got " .. type(max_val))
    end
    if img1.ndim ~= 4 then
        error("Invalid img1 shape, we expect BxCxHxW. Got: " .. tostring(img1.shape))
    end
    if img2.ndim ~= 4 then
        error("Invalid img2 shape, we expect BxCxHxW. Got: " .. tostring(img2.shape))
    end
    -- if not img1.shape == img2.shape:
    if not img1:is_same_size(img2) then
        error(("img1 and img2 shapes must be the same. Got: %s and %s"):format(
            tostring(img1.shape), tostring(img2.shape)))
    end

    -- prepare kernel
    -- kernel = get_gaussian_kernel1d(window_size, 1.5, device=img1.device, dtype=img1.dtype)
    local kernel = get_gaussian_kernel1d(window_size, 1.5, false, { dtype = img1.dtype })

    -- compute coefficients
    local C1 = (0.01 * max_val) ^ 2
    local C2 = (0.03 * max_val) ^ 2

    -- compute local mean per channel
    local mu1 = filter2d_separable(img1, kernel, kernel)
    local mu2 = filter2d_separable(img2, kernel, kernel)

    local cropping_shape = {}
    if padding == "valid" then
        -- height = width = kernel.shape[-1]
        local height = kernel:size(-1)
        local width = height
        cropping_shape = _compute_padding({ height, width })
        mu1 = _crop(mu1, cropping_shape)
        mu2 = _crop(mu2, cropping_shape)
    end

    local mu1_sq = mu1 ^ 2
    local mu2_sq = mu2 ^ 2
    local mu1_mu2 = mu1 * mu2

    local mu_img1_sq = filter2d_separable(img1 ^ 2, kernel, kernel)
    local mu_img2_sq = filter2d_separable(img2 ^ 2, kernel, kernel)
    local mu_img1_img2 = filter2d_separable(img1 * img2, kernel, kernel)

    if padding == "valid" then
        mu_img1_sq = _crop(mu_img1_sq, cropping_shape)
        mu_img2_sq = _crop(mu_img2_sq, cropping_shape)
        mu_img1_img2 = _crop(mu_img1_img2, cropping_shape)
    end

    -- compute local sigma per channel
    local sigma1_sq = mu_img1_sq - mu1_sq
    local sigma2_sq = mu_img2_sq - mu2_sq
    local sigma12 = mu_img1_img2 - mu1_mu2

    -- compute the similarity index map
    local num = (2.0 * mu1_mu2 + C1) * (2.0 * sigma12 + C2)
    local den = (mu1_sq + mu2_sq + C1) * (sigma1_sq + sigma2_sq + C2)

    return num / (den + eps)
end

-- def ssim_loss(img1, img2, window_size, max_val=1.0, eps=1e-12, reduction="mean",
--               padding="same") -> torch.Tensor:
local function ssim_loss(img1, img2, window_size, max_val, eps, reduction, padding)
    reduction = reduction or "mean"
    -- compute the ssim map
    local ssim_map = ssim(img1, img2, window_size, max_val, eps, padding)

    -- compute and reduce the loss
    -- loss = torch.clamp((1.0 - ssim_map) / 2, min=0, max=1)
    local loss = tide.clamp((1.0 - ssim_map) / 2, 0, 1)

    if reduction == "mean" then
        loss = tide.mean(loss)
    elseif reduction == "sum" then
        loss = tide.sum(loss)
    elseif reduction == "none" then -- luacheck: ignore 542
    else
        -- raise NotImplementedError("Invalid reduction option.")
        error("Invalid reduction option.")
    end
    return loss
end

---------------------------------------------------------------------------------------------
-- 5. checks against PyTorch 1.13 (the same functions, on the same formula images)
---------------------------------------------------------------------------------------------
-- PyTorch's values: shape, then sum, sum weighted by cos(0.1 * k) over the flat index k,
-- first and last element
local REF = {
    g1d = { shape = {1, 5},
        sums = { 0.9999999553, 0.9730845348, 0.1200783774, 0.1200783774 } },
    g1d_t = { shape = {2, 5},
        sums = { 1.999999959, 1.736063533, 0.1200783774, 0.009620057419 } },
    g2d = { shape = {1, 3, 5},
        sums = { 0.9999999925, 0.703074344, 0.02635677159, 0.02635677159 } },
    g2d_t = { shape = {2, 5, 3},
        sums = { 2.000000114, 0.1444198898, 0.03696028516, 0.006999238394 } },
    lap = { shape = {5, 5},
        sums = { 0, -2.178638712, 1, 1 } },
    sob = { shape = {2, 3, 3},
        sums = { 0, -2.576387221, -1, 1 } },
    sobn = { shape = {2, 3, 3},
        sums = { 0, -0.3220484026, -0.125, 0.125 } },
    f2d_reflect = { shape = {2, 3, 7, 8},
        sums = { 167.7112308, 4.352600881, 0.5303747654, 0.5596528649 } },
    f2dn_reflect = { shape = {2, 3, 7, 8},
        sums = { 126.1658078, 3.242968005, 0.4314627647, 0.3841763735 } },
    f2dconv_reflect = { shape = {2, 3, 7, 8},
        sums = { 1009.006237, 25.85146838, 3.086948872, 2.987350464 } },
    box_reflect = { shape = {2, 3, 7, 8},
        sums = { 167.3494587, 3.927643794, 0.4854825437, 0.6611559987 } },
    gauss_reflect = { shape = {2, 3, 7, 8},
        sums = { 168.0025524, 4.688469999, 0.5044764876, 0.4735067189 } },
    lap_reflect = { shape = {2, 3, 7, 8},
        sums = { -1.076139316, -1.325660215, 0.01047640666, 0.3736492395 } },
    f2d_replicate = { shape = {2, 3, 7, 8},
        sums = { 169.2600081, 6.026076834, 0.5613532066, 0.2976022363 } },
    f2dn_replicate = { shape = {2, 3, 7, 8},
        sums = { 127.5884417, 4.094742799, 0.3858686388, 0.003822594881 } },
    f2dconv_replicate = { shape = {2, 3, 7, 8},
        sums = { 1020.912138, 32.37537248, 2.906141281, 0.08982336521 } },
    box_replicate = { shape = {2, 3, 7, 8},
        sums = { 169.2475867, 5.958525158, 0.5632155538, 0.3585357666 } },
    gauss_replicate = { shape = {2, 3, 7, 8},
        sums = { 169.9589635, 6.504386767, 0.5226200223, 0.2459985614 } },
    lap_replicate = { shape = {2, 3, 7, 8},
        sums = { 5.49480319e-07, -0.1525165502, 0.02803526446, 0.1922034025 } },
    f2d_constant = { shape = {2, 3, 7, 8},
        sums = { 136.9975726, 6.464900351, 0.2643991411, 0.1887801588 } },
    f2dn_constant = { shape = {2, 3, 7, 8},
        sums = { 115.1488438, 7.402697758, 0.3971558809, 0.009316623211 } },
    f2dconv_constant = { shape = {2, 3, 7, 8},
        sums = { 924.2627349, 57.30168562, 2.406141281, 0.07962977886 } },
    box_constant = { shape = {2, 3, 7, 8},
        sums = { 129.5445775, 6.421553384, 0.2166456282, 0.2070942819 } },
    gauss_constant = { shape = {2, 3, 7, 8},
        sums = { 137.2275616, 7.499189375, 0.2531953752, 0.1826051772 } },
    lap_constant = { shape = {2, 3, 7, 8},
        sums = { -16.63961623, 0.3592540055, -0.1451588422, 0.1247499287 } },
    f2d_circular = { shape = {2, 3, 7, 8},
        sums = { 169.2786992, 5.427545407, 0.5276910663, 0.4171686769 } },
    f2dn_circular = { shape = {2, 3, 7, 8},
        sums = { 126.9590318, 4.070239075, 0.4717361331, 0.1441649795 } },
    f2dconv_circular = { shape = {2, 3, 7, 8},
        sums = { 1015.672249, 32.63093095, 3.1681633, 0.07264918089 } },
    box_circular = { shape = {2, 3, 7, 8},
        sums = { 169.2787181, 5.260541886, 0.509075582, 0.4272074997 } },
    gauss_circular = { shape = {2, 3, 7, 8},
        sums = { 169.2786955, 5.068845278, 0.4914777577, 0.4310435653 } },
    lap_circular = { shape = {2, 3, 7, 8},
        sums = { 4.041939974e-07, -0.5546158146, -0.01056949049, 0.2415202856 } },
    f2d_valid = { shape = {2, 3, 5, 4},
        sums = { 60.0763965, -2.620687915, 0.5209334493, 0.4698152244 } },
    box_sep = { shape = {2, 3, 7, 8},
        sums = { 167.349456, 3.927645007, 0.4854825437, 0.6611559987 } },
    gauss_t = { shape = {2, 3, 7, 8},
        sums = { 168.0595995, 3.977019892, 0.5346828103, 0.3534638882 } },
    gauss_2d = { shape = {2, 3, 7, 8},
        sums = { 168.0025522, 4.688469799, 0.5044764876, 0.4735066891 } },
    sg_sobel = { shape = {2, 3, 2, 7, 8},
        sums = { 1.027229626, -4.231006498, 0.04480971396, -0.4865069985 } },
    sg_diff = { shape = {2, 3, 2, 7, 8},
        sums = { 2.054458797, -8.40550669, 0.1808077097, -0.9945292473 } },
    sobel = { shape = {2, 3, 7, 8},
        sums = { 44.03867048, -3.841408141, 0.0448230803, 0.4868735969 } },
    median = { shape = {2, 3, 7, 8},
        sums = { 116.1059262, 9.557060367, 0, 0 } },
    median35 = { shape = {2, 3, 7, 8},
        sums = { 102.0492973, 7.655053481, 0, 0 } },
    ssim = { shape = {2, 3, 7, 8},
        sums = { 3.928572475, -2.835682954, 0.4715931714, 0.6613526344 } },
    ssim_valid = { shape = {2, 3, 3, 4},
        sums = { -1.193701211, -1.49187287, 0.3912734091, -0.1301278174 } },
    ssim_loss = { shape = {},
        sums = { 0.494153887, 0.494153887, 0.494153887, 0.494153887 } },
    ssim_loss_sum = { shape = {},
        sums = { 161.8710938, 161.8710938, 161.8710938, 161.8710938 } },
    ssim_grad = { shape = {2, 3, 7, 8},
        sums = { -6.505734541, -33.67828683, 1.581533551, 1.450802684 } },
}

local N = 2 * 3 * 7 * 8
-- x = ((torch.arange(N) * 0.37).sin() * 0.5 + 0.5).view(2, 3, 7, 8)
local x = ((tide.arange(N, { dtype = tide.float32 }) * 0.37):sin() * 0.5 + 0.5):view(2, 3, 7, 8)
local y = ((tide.arange(N, { dtype = tide.float32 }) * 0.23 + 1):cos() * 0.4 + 0.5):view(2, 3, 7, 8)

local function check(name, t, tol)
    local want = REF[name]
    assert(want, name)
    local shape = {}
    for d = 1, t.ndim do shape[d] = t:size(d) end
    assert.same(want.shape, shape, name .. " shape")
    t = t:detach():double()
    local w = (tide.arange(t:numel(), { dtype = tide.float64 }) * 0.1):cos():view(t.shape)
    local f = t:flatten()
    local got = { t:sum():item(), (t * w):sum():item(), f[1]:item(), f[-1]:item() }
    assert_close_list(want.sums, got, tol or 1e-5, name)
end

describe("kornia filters (ported_scripts150)", function()
    it("builds the gaussian, laplacian and sobel kernels", function()
        check("g1d", get_gaussian_kernel1d(5, 1.5))
        check("g1d_t", get_gaussian_kernel1d(5, tide.tensor({ { 1.5 }, { 0.7 } })))
        check("g2d", get_gaussian_kernel2d({ 3, 5 }, { 1.5, 1.2 }))
        check("g2d_t", get_gaussian_kernel2d({ 5, 3 }, tide.tensor({ { 1.5, 1.5 }, { 0.8, 2.0 } })))
        check("lap", get_laplacian_kernel2d(5))
        check("sob", get_spatial_gradient_kernel2d("sobel", 1))
        check("sobn", normalize_kernel2d(get_spatial_gradient_kernel2d("sobel", 1)))
        assert.same({ 2, 2, 1, 1 }, _compute_padding({ 3, 5 }))
        assert.same({ 1, 2, 0, 1 }, _compute_padding({ 2, 4 }))
        local ok, err = pcall(get_gaussian_kernel1d, 4, 1.5)
        assert.is_false(ok)
        assert.matches("Kernel size must be an odd integer bigger than 0. Gotcha 4 on 4", err,
            1, true)
        ok, err = pcall(get_spatial_gradient_kernel2d, "canny", 1)
        assert.is_false(ok)
        assert.matches("Mode should be `sobel` or `diff`. Got canny", err, 1, true)
    end)

    for _, bt in ipairs({ "reflect", "replicate", "constant", "circular" }) do
        it("filters with border_type " .. bt, function()
            local k = get_gaussian_kernel2d({ 3, 5 }, { 1.0, 1.5 })
            check("f2d_" .. bt, filter2d(x, k, bt))
            local k2 = tide.tensor({ { { 1., 2., 0. }, { -1., 3., 1. } } })
            check("f2dn_" .. bt, filter2d(x, k2, bt, true))
            check("f2dconv_" .. bt, filter2d(x, k2, bt, false, "same", "conv"))
            check("box_" .. bt, box_blur(x, { 3, 5 }, bt))
            check("gauss_" .. bt, gaussian_blur2d(x, { 5, 3 }, { 1.5, 0.8 }, bt))
            check("lap_" .. bt, laplacian(x, 3, bt))
        end)
    end

    it("filters with padding 'valid', separable box and tensor sigma", function()
        check("f2d_valid", filter2d(x, get_gaussian_kernel2d({ 3, 5 }, { 1.0, 1.5 }), nil, false,
            "valid"))
        check("box_sep", box_blur(x, { 3, 5 }, nil, true))
        check("gauss_t", gaussian_blur2d(x, 3, tide.tensor({ { 1.5, 0.8 }, { 0.6, 1.1 } }), nil,
            false))
        check("gauss_2d", gaussian_blur2d(x, { 5, 3 }, { 1.5, 0.8 }, nil, false))
        local ok, err = pcall(filter2d, x, get_box_kernel2d(3), "zeros")
        assert.is_false(ok)
        assert.matches("Invalid border, zeros. Expected one of", err, 1, true)
        ok, err = pcall(gaussian_blur2d, x, 3, { 1.0, -1.0 })
        assert.is_false(ok)
        assert.matches("sigma must be positive", err, 1, true)
    end)

    it("computes spatial_gradient, sobel and median_blur", function()
        check("sg_sobel", spatial_gradient(x))
        check("sg_diff", spatial_gradient(x, "diff", 1, false))
        check("sobel", sobel(x))
        check("median", median_blur(x, 3))
        check("median35", median_blur(x, { 3, 5 }))
    end)

    it("computes ssim, ssim_loss and the gradient of ssim_loss", function()
        check("ssim", ssim(x, y, 5))
        check("ssim_valid", ssim(x, y, 5, nil, nil, "valid"))
        check("ssim_loss", ssim_loss(x, y, 5))
        check("ssim_loss_sum", ssim_loss(x, y, 3, 2.0, nil, "sum"))
        local yy = y:clone():requires_grad_()
        local l = ssim_loss(x, yy, 5)
        l:backward()
        -- d loss / d img2, scaled by 1000 (PyTorch's yy.grad * 1000)
        check("ssim_grad", yy.grad * 1000, 1e-4)
        local ok, err = pcall(ssim, x, y:view(2, 3, 8, 7), 5)
        assert.is_false(ok)
        assert.matches("img1 and img2 shapes must be the same", err, 1, true)
    end)
end)
