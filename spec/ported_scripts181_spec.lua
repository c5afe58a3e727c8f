-- ported_scripts181_spec.lua — bayesiains/nflows' rational-quadratic splines:
-- nflows/utils/torchutils.py (searchsorted with its eps on the last bin, sum_except_batch,
-- tile), nflows/transforms/splines/rational_quadratic.py (unconstrained_rational_quadratic_spline
-- with linear tails and the constant pad of the derivatives, rational_quadratic_spline forward and
-- inverse) and nflows/transforms/coupling.py (CouplingTransform's split by a mask,
-- PiecewiseCouplingTransform, PiecewiseRationalQuadraticCouplingTransform) with a small MLP
-- transform net, ported line for line at tiny sizes (features 4, num_bins 5, tail_bound 3,
-- batch 6) on inputs and weights given by formulas, checked against PyTorch 1.13's values.
-- The Python line stands above each Lua line that differs from it. Bin indices are 1-based
-- (searchsorted drops its "- 1"); nflows' feature indices are 1-based too.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

local unpack = table.unpack or unpack -- luacheck: ignore

-- PyTorch 1.13's values (/tmp script: the Python above, run on the same formulas)
local REF = {
    x = {
        0.3993337, 3.9417989, 1.7095202, -3.0272093, -3.3290703, 1.2461652, 3.9957654,
        0.8915604, -3.5187831, -2.7740998, 2.0346472, 3.8626316, 0.0318535, -3.8455901,
        -2.089237, 2.7278557, 3.5486307, -0.8293412, -3.9923282, -1.3065434, 3.2933328,
        3.0684664, -1.651706, -3.9521265,
    },
    y = {
        0.7371457, 3.9417989, -1.3672379, -3.0272093, -3.3290703, 1.7360771, 3.9957654,
        0.4038151, -3.5187831, -2.5039401, 2.261395, 3.8626316, 2.5915606, -3.8455901,
        0.595299, 2.3428562, 3.5486307, -0.9718583, -3.9923282, -0.1310242, 3.2933328,
        3.0684664, -2.5564487, -3.9521265,
    },
    lad = {
        -0.6537272, 0.0, -0.376142, 0.0, 0.0, -0.332079, 0.0,
        -0.6324302, 0.0, 1.254249, -0.4633875, 0.0, -1.4894979, 0.0,
        0.3632225, 1.0777302, 0.0, -0.2626485, 0.0, 0.3832414, 0.0,
        0.0, -2.1175158, 0.0,
    },
    xi_err = 4.76837158203125e-07,
    ladi = {
        0.6537272, 0.0, 0.376142, 0.0, 0.0, 0.3320791, 0.0,
        0.6324302, 0.0, -1.2542492, 0.4633874, 0.0, 1.4894969, 0.0,
        -0.3632225, -1.0777299, 0.0, 0.2626483, 0.0, -0.3832413, 0.0,
        0.0, 2.1175158, 0.0,
    },
    inv_x = {
        1.3337268, 0.8836758, 2.910363, -2.5890105, 0.0332586, -2.7746401, -1.6436683,
        -0.0199199, 1.4836302, 2.3497813, 1.3346717, 1.6850183, -2.8983064, 0.3317039,
        -2.8789494, 1.4677298, 2.5059855, 1.1781254, 2.7252228, -1.3745863, -2.1537209,
        -2.8904867, 1.4211786, -2.6183445,
    },
    inv_lad = {
        -0.0854827, 1.819445, -3.0759938, -1.9789155, -0.1094288, -0.5215962, 0.4401681,
        0.0840256, -0.0032144, 0.8655075, 0.4939722, -0.5332763, -3.1162004, 0.7720716,
        -2.2520263, 0.1497356, -1.188621, -0.1517849, -1.4803991, -0.3605382, -0.3255541,
        -1.9023926, 0.3218356, -1.7474456,
    },
    ss = {
        1.0, 1.0,
    },
    bl = {
        0.0, 1.0, 2.000001, 0.0, 0.5, 1.000001,
    },
    tile = {
        1.0, 1.0, 2.0, 2.0, 3.0, 3.0,
    },
    sum_eb = {
        0.1761615, 0.2350365,
    },
    cz = {
        0.6040555, 3.9417989, 1.3775026, -3.0272093, -3.3290703, 1.2461652, 3.9957654,
        0.8915604, -3.5187831, -2.7740998, 1.8357868, 3.8626316, 0.3667243, -3.8455901,
        -2.0396502, 2.7278557, 3.5486307, -0.8293412, -3.9923282, -1.3065434, 3.2933328,
        3.0684664, -1.8402874, -3.9521265,
    },
    cl = {
        -0.2037276, 0.0, -0.3983973, 0.3837123, 0.0, -0.1243598,
    },
    c_err = 2.384185791015625e-07,
    cli = {
        0.2037276, 0.0, 0.398397, -0.3837122, 0.0, 0.1243599,
    },
    loss = 19.686763763427734,
    g_l1_weight = {
        0.4386171, -0.2489564, -0.1871093, 0.6262775, 0.0563607, 0.0378442, 0.7614388,
        -0.5110254, 0.1844545, -0.208969, 0.0778457, -0.1002361, -0.0044008, -0.277357,
        0.194933, -0.3365028,
    },
    g_l1_bias = {
        -0.0209261, -0.2300869, -0.0281635, -0.1396804, -0.0997981, -0.0406062, -0.1016921,
        -0.0274333,
    },
    g_l2_weight = {
        -0.0191041, 0.0084369, 0.0180575, -0.0053518, -0.0181028, -0.0094566, 0.026419,
        0.0200655, -0.0230242, 0.0119348, 0.0226056, -0.0047222, -0.0225945, -0.0133222,
        0.029781, 0.0247225, 0.048326, -0.0406671, -0.0548978, -0.0053614, 0.0542926,
        0.0449793, -0.044307, -0.0566601, 0.0018501, 0.0055597, 0.0012934, 0.0067546,
        -0.0010515, -0.0060328, -0.0099906, 4.3e-06, -0.0080478, 0.0147356, 0.0129413,
        0.0086807, -0.0125438, -0.0161678, -0.0019024, 0.0118678, 0.0089123, -0.002444,
        -0.0077123, 0.0039557, 0.007789, 0.002786, -0.0140636, -0.0089052, -0.0023226,
        0.007364, 0.0052191, 0.005548, -0.0049885, -0.0080563, -0.0041752, 0.0043752,
        -0.0374001, 0.0283801, 0.0410107, 0.0011247, -0.0406575, -0.0314401, 0.0378942,
        0.0429054, 0.0161685, -0.0175629, -0.0202549, -0.0056634, 0.019905, 0.0193604,
        -0.0102124, -0.0201653, 0.0146418, -0.0157372, -0.0182626, -0.004965, 0.0179519,
        0.01735, -0.009443, -0.0182101, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0158896, -0.0095206, -0.0162133,
        0.0020032, 0.0161578, 0.0105931, -0.0190563, -0.0174538, 0.0594124, -0.0645934,
        -0.0744555, -0.0208666, 0.0731677, 0.0712037, -0.0374592, -0.0741165, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        -0.0019817, -0.1325738, -0.0157082, 0.1178642, 0.0549792, -0.0139231, -0.2323904,
        -0.0278971, 0.0382579, 0.0239791, -0.03669, -0.0534458, 0.0110847, 0.04577,
        0.0550032, -0.0327346, 0.0550338, 0.0173225, -0.0551034, -0.0645882, 0.0284031,
        0.0627507, 0.0585584, -0.0507351, -0.0029741, 0.0769292, 0.0171291, -0.04069,
        -0.0425342, -0.00677, 0.0873617, 0.0208077, -0.0883359, 0.014343, 0.0903725,
        0.0408597, -0.0519327, -0.0878276, 0.0314671, 0.0905591, -0.0256899, 0.1589544,
        0.0513833, -0.090775, -0.0994966, -0.020888, 0.209409, 0.0614077, 0.0147208,
        0.0174999, -0.0087076, -0.0022964, -0.0039194, 0.0050005, -0.0088783, -0.0099236,
        -0.0012016, 0.0260786, 0.0091186, 0.0057386, -0.0197164, -0.011587, -0.0058463,
        0.0077516, 0.0629746, -0.0438288, -0.070855, -0.0138325, 0.0587428, 0.0638943,
        -0.0516236, -0.0722551, -0.0508039, -0.1587041, 0.0190607, 0.1011653, 0.0643897,
        -0.0364198, -0.1430608, 0.0130194, 0.0889385, 0.0188442, -0.0888748, -0.0924915,
        0.0570346, 0.093449, 0.079792, -0.083404, -0.0054802, -0.0006906, 0.0055359,
        0.0052763, -0.0037299, -0.0056995, -0.004094, 0.0052437, -0.0280743, 0.0309399,
        0.0353818, 0.0102684, -0.0347577, -0.034101, 0.0172141, 0.0351499, -0.0644531,
        -0.1164867, 0.0399655, 0.0834079, 0.0345233, -0.0503433, -0.0903188, 0.0361812,
    },
    g_l2_bias = {
        -0.0948279, -0.0975164, 0.0564406, 0.0697138, 0.0661899, 0.0584, 0.0486358,
        -0.0730368, -0.0186751, -0.0153239, 0.0, 0.0551109, -0.069168, 0.0,
        0.3057068, -0.0824866, -0.0977663, -0.0189722, -0.1064817, -0.1728926, 0.1123544,
        0.1178018, 0.0616355, -0.1188991, -0.1138256, 0.0058702, 0.0366473, -0.1563943,
    },
}

-- the values of a tensor, flattened, as a Lua list
local function L(t)
    return t:detach():reshape(-1):float():tolist()
end

-- torch.arange(n).float() * a + b).sin() * c, reshaped: the inputs and weights on both sides
local function fm(shape, a, b, c)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return (tide.arange(0, n, { dtype = "float32" }) * a + b):sin():mul(c):reshape(shape)
end

---------------------------------------------------------------------------------------------
-- 1. nflows/utils/torchutils.py
---------------------------------------------------------------------------------------------
-- def tile(x, n):
local function tile(x, n)
    -- if not check.is_positive_int(n):
    if type(n) ~= "number" or n < 1 or n % 1 ~= 0 then
        error("Argument 'n' must be a positive integer.")
    end
    -- x_ = x.reshape(-1)
    local x_ = x:reshape(-1)
    -- x_ = x_.repeat(n)
    x_ = x_["repeat"](x_, n)
    x_ = x_:reshape(n, -1)
    -- x_ = x_.transpose(1, 0)
    x_ = x_:transpose(2, 1)
    x_ = x_:reshape(-1)
    return x_
end

-- def sum_except_batch(x, num_batch_dims=1):
local function sum_except_batch(x, num_batch_dims)
    num_batch_dims = num_batch_dims or 1
    -- reduce_dims = list(range(num_batch_dims, x.ndimension()))
    local reduce_dims = {}
    for d = num_batch_dims + 1, x:dim() do reduce_dims[#reduce_dims + 1] = d end
    -- return torch.sum(x, dim=reduce_dims)
    return tide.sum(x, { dim = reduce_dims })
end

-- def searchsorted(bin_locations, inputs, eps=1e-6):
local function searchsorted(bin_locations, inputs, eps)
    eps = eps or 1e-6
    -- bin_locations[..., -1] += eps
    bin_locations[{ "...", -1 }]:add_(eps)
    -- return torch.sum(inputs[..., None] >= bin_locations, dim=-1) - 1
    -- (1-based bins: no "- 1")
    return tide.sum(inputs[{ "...", tide.newaxis }]:ge(bin_locations), { dim = -1 })
end

---------------------------------------------------------------------------------------------
-- 2. nflows/transforms/splines/rational_quadratic.py
---------------------------------------------------------------------------------------------
local DEFAULT_MIN_BIN_WIDTH = 1e-3
local DEFAULT_MIN_BIN_HEIGHT = 1e-3
local DEFAULT_MIN_DERIVATIVE = 1e-3

local rational_quadratic_spline

-- def unconstrained_rational_quadratic_spline(inputs, unnormalized_widths, ...):
local function unconstrained_rational_quadratic_spline(o)
    local inputs = o.inputs
    local unnormalized_widths = o.unnormalized_widths
    local unnormalized_heights = o.unnormalized_heights
    local unnormalized_derivatives = o.unnormalized_derivatives
    local tails, tail_bound = o.tails or "linear", o.tail_bound or 1.0
    local min_derivative = o.min_derivative or DEFAULT_MIN_DERIVATIVE
    -- inside_interval_mask = (inputs >= -tail_bound) & (inputs <= tail_bound)
    local inside_interval_mask = inputs:ge(-tail_bound):logical_and(inputs:le(tail_bound))
    -- outside_interval_mask = ~inside_interval_mask
    local outside_interval_mask = inside_interval_mask:logical_not()

    local outputs = tide.zeros_like(inputs)
    local logabsdet = tide.zeros_like(inputs)

    if tails == "linear" then
        -- unnormalized_derivatives = F.pad(unnormalized_derivatives, pad=(1, 1))
        unnormalized_derivatives = F.pad(unnormalized_derivatives, { 1, 1 })
        -- constant = np.log(np.exp(1 - min_derivative) - 1)
        local constant = math.log(math.exp(1 - min_derivative) - 1)
        -- unnormalized_derivatives[..., 0] = constant
        unnormalized_derivatives[{ "...", 1 }] = constant
        -- unnormalized_derivatives[..., -1] = constant
        unnormalized_derivatives[{ "...", -1 }] = constant

        -- outputs[outside_interval_mask] = inputs[outside_interval_mask]
        outputs[outside_interval_mask] = inputs[outside_interval_mask]
        logabsdet[outside_interval_mask] = 0
    else
        -- raise RuntimeError("{} tails are not implemented.".format(tails))
        error(string.format("%s tails are not implemented.", tails))
    end

    -- if torch.any(inside_interval_mask):
    if tide.any(inside_interval_mask):item() then
        -- (outputs[inside_interval_mask], logabsdet[inside_interval_mask])
        --     = rational_quadratic_spline(
        local out_in, lad_in = rational_quadratic_spline({
            inputs = inputs[inside_interval_mask],
            -- unnormalized_widths=unnormalized_widths[inside_interval_mask, :],
            unnormalized_widths = unnormalized_widths[{ inside_interval_mask, {} }],
            unnormalized_heights = unnormalized_heights[{ inside_interval_mask, {} }],
            unnormalized_derivatives = unnormalized_derivatives[{ inside_interval_mask, {} }],
            inverse = o.inverse,
            left = -tail_bound,
            right = tail_bound,
            bottom = -tail_bound,
            top = tail_bound,
            min_bin_width = o.min_bin_width,
            min_bin_height = o.min_bin_height,
            min_derivative = o.min_derivative,
            enable_identity_init = o.enable_identity_init,
        })
        outputs[inside_interval_mask] = out_in
        logabsdet[inside_interval_mask] = lad_in
    end

    return outputs, logabsdet
end

-- def rational_quadratic_spline(inputs, unnormalized_widths, ..., inverse=False, left=0.0, ...):
function rational_quadratic_spline(o)
    local inputs = o.inputs
    local unnormalized_widths = o.unnormalized_widths
    local unnormalized_heights = o.unnormalized_heights
    local unnormalized_derivatives = o.unnormalized_derivatives
    local inverse = o.inverse or false
    local left, right = o.left or 0.0, o.right or 1.0
    local bottom, top = o.bottom or 0.0, o.top or 1.0
    local min_bin_width = o.min_bin_width or DEFAULT_MIN_BIN_WIDTH
    local min_bin_height = o.min_bin_height or DEFAULT_MIN_BIN_HEIGHT
    local min_derivative = o.min_derivative or DEFAULT_MIN_DERIVATIVE
    -- if torch.min(inputs) < left or torch.max(inputs) > right:
    if tide.min(inputs):item() < left or tide.max(inputs):item() > right then
        -- raise InputOutsideDomain()
        error("InputOutsideDomain")
    end

    -- num_bins = unnormalized_widths.shape[-1]
    local num_bins = unnormalized_widths:size(-1)

    if min_bin_width * num_bins > 1.0 then
        error("Minimal bin width too large for the number of bins")
    end
    if min_bin_height * num_bins > 1.0 then
        error("Minimal bin height too large for the number of bins")
    end

    -- widths = F.softmax(unnormalized_widths, dim=-1)
    local widths = F.softmax(unnormalized_widths, { dim = -1 })
    widths = min_bin_width + (1 - min_bin_width * num_bins) * widths
    -- cumwidths = torch.cumsum(widths, dim=-1)
    local cumwidths = tide.cumsum(widths, -1)
    -- cumwidths = F.pad(cumwidths, pad=(1, 0), mode="constant", value=0.0)
    cumwidths = F.pad(cumwidths, { 1, 0 }, "constant", 0.0)
    cumwidths = (right - left) * cumwidths + left
    -- cumwidths[..., 0] = left
    cumwidths[{ "...", 1 }] = left
    -- cumwidths[..., -1] = right
    cumwidths[{ "...", -1 }] = right
    -- widths = cumwidths[..., 1:] - cumwidths[..., :-1]
    widths = cumwidths[{ "...", { 2, -1 } }] - cumwidths[{ "...", { 1, -2 } }]

    local beta
    -- if enable_identity_init: #flow is the identity if initialized with parameters equal to zero
    if o.enable_identity_init then
        -- beta = np.log(2) / (1 - min_derivative)
        beta = math.log(2) / (1 - min_derivative)
    else -- backward compatibility
        beta = 1
    end
    -- derivatives = min_derivative + F.softplus(unnormalized_derivatives, beta=beta)
    local derivatives = min_derivative + F.softplus(unnormalized_derivatives, { beta = beta })

    -- heights = F.softmax(unnormalized_heights, dim=-1)
    local heights = F.softmax(unnormalized_heights, { dim = -1 })
    heights = min_bin_height + (1 - min_bin_height * num_bins) * heights
    -- cumheights = torch.cumsum(heights, dim=-1)
    local cumheights = tide.cumsum(heights, -1)
    -- cumheights = F.pad(cumheights, pad=(1, 0), mode="constant", value=0.0)
    cumheights = F.pad(cumheights, { 1, 0 }, "constant", 0.0)
    cumheights = (top - bottom) * cumheights + bottom
    -- cumheights[..., 0] = bottom
    cumheights[{ "...", 1 }] = bottom
    -- cumheights[..., -1] = top
    cumheights[{ "...", -1 }] = top
    -- heights = cumheights[..., 1:] - cumheights[..., :-1]
    heights = cumheights[{ "...", { 2, -1 } }] - cumheights[{ "...", { 1, -2 } }]

    local bin_idx
    if inverse then
        -- bin_idx = torchutils.searchsorted(cumheights, inputs)[..., None]
        bin_idx = searchsorted(cumheights, inputs)[{ "...", tide.newaxis }]
    else
        -- bin_idx = torchutils.searchsorted(cumwidths, inputs)[..., None]
        bin_idx = searchsorted(cumwidths, inputs)[{ "...", tide.newaxis }]
    end

    -- input_cumwidths = cumwidths.gather(-1, bin_idx)[..., 0]
    local input_cumwidths = cumwidths:gather(-1, bin_idx)[{ "...", 1 }]
    -- input_bin_widths = widths.gather(-1, bin_idx)[..., 0]
    local input_bin_widths = widths:gather(-1, bin_idx)[{ "...", 1 }]

    -- input_cumheights = cumheights.gather(-1, bin_idx)[..., 0]
    local input_cumheights = cumheights:gather(-1, bin_idx)[{ "...", 1 }]
    local delta = heights / widths
    -- input_delta = delta.gather(-1, bin_idx)[..., 0]
    local input_delta = delta:gather(-1, bin_idx)[{ "...", 1 }]

    -- input_derivatives = derivatives.gather(-1, bin_idx)[..., 0]
    local input_derivatives = derivatives:gather(-1, bin_idx)[{ "...", 1 }]
    -- input_derivatives_plus_one = derivatives[..., 1:].gather(-1, bin_idx)[..., 0]
    local input_derivatives_plus_one =
        derivatives[{ "...", { 2, -1 } }]:gather(-1, bin_idx)[{ "...", 1 }]

    -- input_heights = heights.gather(-1, bin_idx)[..., 0]
    local input_heights = heights:gather(-1, bin_idx)[{ "...", 1 }]

    if inverse then
        -- a = (inputs - input_cumheights) * (
        --     input_derivatives + input_derivatives_plus_one - 2 * input_delta
        -- ) + input_heights * (input_delta - input_derivatives)
        local a = (inputs - input_cumheights) * (
            input_derivatives + input_derivatives_plus_one - 2 * input_delta
        ) + input_heights * (input_delta - input_derivatives)
        local b = input_heights * input_derivatives - (inputs - input_cumheights) * (
            input_derivatives + input_derivatives_plus_one - 2 * input_delta
        )
        local c = -input_delta * (inputs - input_cumheights)

        -- discriminant = b.pow(2) - 4 * a * c
        local discriminant = b:pow(2) - 4 * a * c
        -- assert (discriminant >= 0).all()
        assert(discriminant:ge(0):all():item())

        -- root = (2 * c) / (-b - torch.sqrt(discriminant))
        local root = (2 * c) / (-b - tide.sqrt(discriminant))
        -- root = (- b + torch.sqrt(discriminant)) / (2 * a)
        local outputs = root * input_bin_widths + input_cumwidths

        local theta_one_minus_theta = root * (1 - root)
        local denominator = input_delta + (
            (input_derivatives + input_derivatives_plus_one - 2 * input_delta)
            * theta_one_minus_theta
        )
        -- derivative_numerator = input_delta.pow(2) * (
        --     input_derivatives_plus_one * root.pow(2)
        --     + 2 * input_delta * theta_one_minus_theta
        --     + input_derivatives * (1 - root).pow(2)
        -- )
        local derivative_numerator = input_delta:pow(2) * (
            input_derivatives_plus_one * root:pow(2)
            + 2 * input_delta * theta_one_minus_theta
            + input_derivatives * (1 - root):pow(2)
        )
        -- logabsdet = torch.log(derivative_numerator) - 2 * torch.log(denominator)
        local logabsdet = tide.log(derivative_numerator) - 2 * tide.log(denominator)

        return outputs, -logabsdet
    else
        local theta = (inputs - input_cumwidths) / input_bin_widths
        local theta_one_minus_theta = theta * (1 - theta)

        -- numerator = input_heights * (
        --     input_delta * theta.pow(2) + input_derivatives * theta_one_minus_theta
        -- )
        local numerator = input_heights * (
            input_delta * theta:pow(2) + input_derivatives * theta_one_minus_theta
        )
        local denominator = input_delta + (
            (input_derivatives + input_derivatives_plus_one - 2 * input_delta)
            * theta_one_minus_theta
        )
        local outputs = input_cumheights + numerator / denominator

        -- derivative_numerator = input_delta.pow(2) * (
        --     input_derivatives_plus_one * theta.pow(2)
        --     + 2 * input_delta * theta_one_minus_theta
        --     + input_derivatives * (1 - theta).pow(2)
        -- )
        local derivative_numerator = input_delta:pow(2) * (
            input_derivatives_plus_one * theta:pow(2)
            + 2 * input_delta * theta_one_minus_theta
            + input_derivatives * (1 - theta):pow(2)
        )
        -- logabsdet = torch.log(derivative_numerator) - 2 * torch.log(denominator)
        local logabsdet = tide.log(derivative_numerator) - 2 * tide.log(denominator)

        return outputs, logabsdet
    end
end

---------------------------------------------------------------------------------------------
-- 3. nflows/transforms/coupling.py
---------------------------------------------------------------------------------------------
-- class CouplingTransform(Transform):
local CouplingTransform = nn.Module:extend("CouplingTransform")

-- def __init__(self, mask, transform_net_create_fn, unconditional_transform=None):
function CouplingTransform:init(mask, transform_net_create_fn)
    -- mask = torch.as_tensor(mask)
    mask = tide.as_tensor(mask)
    -- if mask.dim() != 1:
    if mask:dim() ~= 1 then
        error("Mask must be a 1-dim tensor.")
    end
    if mask:numel() <= 0 then
        error("Mask can't be empty.")
    end

    -- super().__init__()
    nn.Module.init(self)
    -- self.features = len(mask)
    self.features = #mask
    -- features_vector = torch.arange(self.features)   (1-based feature indices)
    local features_vector = tide.arange(1, self.features + 1)

    -- self.register_buffer("identity_features", features_vector.masked_select(mask <= 0))
    self:register_buffer("identity_features", features_vector:masked_select(mask:le(0)))
    -- self.register_buffer("transform_features", features_vector.masked_select(mask > 0))
    self:register_buffer("transform_features", features_vector:masked_select(mask:gt(0)))

    -- assert self.num_identity_features + self.num_transform_features == self.features
    assert(self:num_identity_features() + self:num_transform_features() == self.features)

    -- self.transform_net = transform_net_create_fn(
    --     self.num_identity_features,
    --     self.num_transform_features * self._transform_dim_multiplier(),
    -- )
    self.transform_net = transform_net_create_fn(
        self:num_identity_features(),
        self:num_transform_features() * self:_transform_dim_multiplier()
    )
    -- unconditional_transform None: self.unconditional_transform = None
end

-- @property def num_identity_features(self): return len(self.identity_features)
function CouplingTransform:num_identity_features()
    return #self.identity_features
end

-- @property def num_transform_features(self): return len(self.transform_features)
function CouplingTransform:num_transform_features()
    return #self.transform_features
end

-- def forward(self, inputs, context=None):
function CouplingTransform:forward(inputs, context)
    -- if inputs.dim() not in [2, 4]:
    if inputs:dim() ~= 2 and inputs:dim() ~= 4 then
        error("Inputs must be a 2D or a 4D tensor.")
    end

    -- if inputs.shape[1] != self.features:
    if inputs:size(2) ~= self.features then
        error(string.format("Expected features = %d, got %d.", self.features, inputs:size(2)))
    end

    -- identity_split = inputs[:, self.identity_features, ...]
    local identity_split = inputs[{ {}, self.identity_features, "..." }]
    -- transform_split = inputs[:, self.transform_features, ...]
    local transform_split = inputs[{ {}, self.transform_features, "..." }]

    -- transform_params = self.transform_net(identity_split, context)
    local transform_params = self.transform_net(identity_split, context)
    -- transform_split, logabsdet = self._coupling_transform_forward(
    --     inputs=transform_split, transform_params=transform_params
    -- )
    local logabsdet
    transform_split, logabsdet = self:_coupling_transform_forward(transform_split,
        transform_params)

    -- outputs = torch.empty_like(inputs)
    local outputs = tide.empty_like(inputs)
    -- outputs[:, self.identity_features, ...] = identity_split
    outputs[{ {}, self.identity_features, "..." }] = identity_split
    -- outputs[:, self.transform_features, ...] = transform_split
    outputs[{ {}, self.transform_features, "..." }] = transform_split

    return outputs, logabsdet
end

-- def inverse(self, inputs, context=None):
function CouplingTransform:inverse(inputs, context)
    if inputs:dim() ~= 2 and inputs:dim() ~= 4 then
        error("Inputs must be a 2D or a 4D tensor.")
    end
    if inputs:size(2) ~= self.features then
        error(string.format("Expected features = %d, got %d.", self.features, inputs:size(2)))
    end

    -- identity_split = inputs[:, self.identity_features, ...]
    local identity_split = inputs[{ {}, self.identity_features, "..." }]
    -- transform_split = inputs[:, self.transform_features, ...]
    local transform_split = inputs[{ {}, self.transform_features, "..." }]

    local logabsdet = 0.0

    -- transform_params = self.transform_net(identity_split, context)
    local transform_params = self.transform_net(identity_split, context)
    -- transform_split, logabsdet_split = self._coupling_transform_inverse(
    --     inputs=transform_split, transform_params=transform_params
    -- )
    local logabsdet_split
    transform_split, logabsdet_split = self:_coupling_transform_inverse(transform_split,
        transform_params)
    -- logabsdet += logabsdet_split
    logabsdet = logabsdet + logabsdet_split

    -- outputs = torch.empty_like(inputs)
    local outputs = tide.empty_like(inputs)
    -- outputs[:, self.identity_features] = identity_split
    outputs[{ {}, self.identity_features }] = identity_split
    -- outputs[:, self.transform_features] = transform_split
    outputs[{ {}, self.transform_features }] = transform_split

    return outputs, logabsdet
end

-- class PiecewiseCouplingTransform(CouplingTransform):
local PiecewiseCouplingTransform = CouplingTransform:extend("PiecewiseCouplingTransform")

-- def _coupling_transform_forward(self, inputs, transform_params):
function PiecewiseCouplingTransform:_coupling_transform_forward(inputs, transform_params)
    -- return self._coupling_transform(inputs, transform_params, inverse=False)
    return self:_coupling_transform(inputs, transform_params, false)
end

-- def _coupling_transform_inverse(self, inputs, transform_params):
function PiecewiseCouplingTransform:_coupling_transform_inverse(inputs, transform_params)
    -- return self._coupling_transform(inputs, transform_params, inverse=True)
    return self:_coupling_transform(inputs, transform_params, true)
end

-- def _coupling_transform(self, inputs, transform_params, inverse=False):
function PiecewiseCouplingTransform:_coupling_transform(inputs, transform_params, inverse)
    -- if inputs.dim() == 4:
    if inputs:dim() == 4 then
        -- b, c, h, w = inputs.shape
        local b, c, h, w = unpack(inputs:size())
        -- transform_params = transform_params.reshape(b, c, -1, h, w).permute(0, 1, 3, 4, 2)
        transform_params = transform_params:reshape(b, c, -1, h, w):permute(1, 2, 4, 5, 3)
    elseif inputs:dim() == 2 then
        -- b, d = inputs.shape
        local b, d = unpack(inputs:size())
        -- transform_params = transform_params.reshape(b, d, -1)
        transform_params = transform_params:reshape(b, d, -1)
    end

    -- outputs, logabsdet = self._piecewise_cdf(inputs, transform_params, inverse)
    local outputs, logabsdet = self:_piecewise_cdf(inputs, transform_params, inverse)

    -- return outputs, torchutils.sum_except_batch(logabsdet)
    return outputs, sum_except_batch(logabsdet)
end

-- class PiecewiseRationalQuadraticCouplingTransform(PiecewiseCouplingTransform):
local PiecewiseRationalQuadraticCouplingTransform =
    PiecewiseCouplingTransform:extend("PiecewiseRationalQuadraticCouplingTransform")

-- def __init__(self, mask, transform_net_create_fn, num_bins=10, tails=None, tail_bound=1.0,
--              apply_unconditional_transform=False, img_shape=None, min_bin_width=..., ...):
function PiecewiseRationalQuadraticCouplingTransform:init(mask, transform_net_create_fn, o)
    o = o or {}
    self.num_bins = o.num_bins or 10
    self.min_bin_width = o.min_bin_width or DEFAULT_MIN_BIN_WIDTH
    self.min_bin_height = o.min_bin_height or DEFAULT_MIN_BIN_HEIGHT
    self.min_derivative = o.min_derivative or DEFAULT_MIN_DERIVATIVE
    self.tails = o.tails
    self.tail_bound = o.tail_bound or 1.0
    -- (apply_unconditional_transform=False: unconditional_transform = None)
    -- super().__init__(mask, transform_net_create_fn, unconditional_transform=...)
    CouplingTransform.init(self, mask, transform_net_create_fn)
end

-- def _transform_dim_multiplier(self):
function PiecewiseRationalQuadraticCouplingTransform:_transform_dim_multiplier()
    if self.tails == "linear" then
        return self.num_bins * 3 - 1
    else
        return self.num_bins * 3 + 1
    end
end

-- def _piecewise_cdf(self, inputs, transform_params, inverse=False):
function PiecewiseRationalQuadraticCouplingTransform:_piecewise_cdf(inputs, transform_params,
                                                                    inverse)
    local K = self.num_bins
    -- unnormalized_widths = transform_params[..., : self.num_bins]
    local unnormalized_widths = transform_params[{ "...", { 1, K } }]
    -- unnormalized_heights = transform_params[..., self.num_bins : 2 * self.num_bins]
    local unnormalized_heights = transform_params[{ "...", { K + 1, 2 * K } }]
    -- unnormalized_derivatives = transform_params[..., 2 * self.num_bins :]
    local unnormalized_derivatives = transform_params[{ "...", { 2 * K + 1, -1 } }]

    -- if hasattr(self.transform_net, "hidden_features"):
    if self.transform_net.hidden_features ~= nil then
        -- unnormalized_widths /= np.sqrt(self.transform_net.hidden_features)
        unnormalized_widths:div_(math.sqrt(self.transform_net.hidden_features))
        -- unnormalized_heights /= np.sqrt(self.transform_net.hidden_features)
        unnormalized_heights:div_(math.sqrt(self.transform_net.hidden_features))
    else
        -- warnings.warn("Inputs to the softmax are not scaled down: initialization might be bad.")
        io.stderr:write("Inputs to the softmax are not scaled down: initialization might be bad.\n")
    end

    local spline_fn, spline_kwargs
    if self.tails == nil then
        spline_fn = rational_quadratic_spline
        spline_kwargs = {}
    else
        spline_fn = unconstrained_rational_quadratic_spline
        -- spline_kwargs = {"tails": self.tails, "tail_bound": self.tail_bound}
        spline_kwargs = { tails = self.tails, tail_bound = self.tail_bound }
    end

    -- return spline_fn(inputs=inputs, ..., min_derivative=self.min_derivative, **spline_kwargs)
    spline_kwargs.inputs = inputs
    spline_kwargs.unnormalized_widths = unnormalized_widths
    spline_kwargs.unnormalized_heights = unnormalized_heights
    spline_kwargs.unnormalized_derivatives = unnormalized_derivatives
    spline_kwargs.inverse = inverse
    spline_kwargs.min_bin_width = self.min_bin_width
    spline_kwargs.min_bin_height = self.min_bin_height
    spline_kwargs.min_derivative = self.min_derivative
    return spline_fn(spline_kwargs)
end

---------------------------------------------------------------------------------------------
-- the test's MLP transform net (nflows' ResidualNet stands in as hidden_features + Linear)
---------------------------------------------------------------------------------------------
local H = 8
local MLP = nn.Module:extend("MLP")
function MLP:init(i, o)
    nn.Module.init(self)
    self.hidden_features = H
    self.l1 = nn.Linear(i, H)
    self.l2 = nn.Linear(H, o)
    tide.no_grad(function()
        self.l1.weight:copy_(fm({ H, i }, 0.61, 0.2, 0.8))
        self.l1.bias:copy_(fm({ H }, 0.9, 0.4, 0.3))
        self.l2.weight:copy_(fm({ o, H }, 0.37, 0.7, 0.9))
        self.l2.bias:copy_(fm({ o }, 0.53, 0.1, 0.4))
    end)
end
function MLP:forward(x, context) -- luacheck: ignore context
    return self.l2(tide.tanh(self.l1(x)))
end

local B, D, K, TB = 6, 4, 5, 3.0

local function spline_inputs()
    return fm({ B, D, K }, 0.7, 0.3, 1.5), fm({ B, D, K }, 0.45, 1.1, 1.2),
        fm({ B, D, K - 1 }, 0.9, 0.5, 1.0)
end

local function max_abs(t)
    return t:abs():max():item()
end

describe("ported nflows rational-quadratic splines (torchutils, splines, coupling)", function()
    it("searchsorted adds eps to the last bin in place and counts 1-based bins; tile; "
        .. "sum_except_batch", function()
        local bl = tide.tensor({ { 0, 1, 2 }, { 0, 0.5, 1 } }, { dtype = "float32" })
        local ss = searchsorted(bl, tide.tensor({ 2, 1 }, { dtype = "float32" }))
        -- PyTorch's 0-based bins + 1
        assert.are.same({ REF.ss[1] + 1, REF.ss[2] + 1 }, ss:tolist())
        assert_close_list(REF.bl, L(bl), 1e-6, "bin_locations")
        -- the eps went into the caller's last bin, in place
        assert.is_true(bl[{ 1, 3 }]:item() - 2 > 5e-7 and bl[{ 2, 3 }]:item() - 1 > 5e-7)
        assert.are.equal(1, bl[{ 2, 2 }]:item() * 2)
        assert.are.same(REF.tile, L(tile(tide.tensor({ 1, 2, 3 }, { dtype = "float32" }), 2)))
        local s = sum_except_batch(fm({ 2, 3, 2 }, 1.0, 0.0, 1.0))
        assert.are.same({ 2 }, s:size())
        assert_close_list(REF.sum_eb, L(s), 1e-5, "sum_except_batch")
    end)

    it("unconstrained spline forward: outputs and logabsdet as PyTorch's, the tails the "
        .. "identity, inverse(forward(x)) == x", function()
        local x = fm({ B, D }, 1.3, 0.1, 4.0)
        assert_close_list(REF.x, L(x), 1e-5, "x")
        local uw, uh, ud = spline_inputs()
        local y, lad = unconstrained_rational_quadratic_spline({ inputs = x,
            unnormalized_widths = uw, unnormalized_heights = uh,
            unnormalized_derivatives = ud, tail_bound = TB })
        assert.are.same({ B, D }, y:size())
        assert_close_list(REF.y, L(y), 1e-5, "outputs")
        assert_close_list(REF.lad, L(lad), 1e-4, "logabsdet")
        -- some inputs lie in the tails: passed through with logabsdet 0
        local outside = x:abs():gt(TB)
        assert.is_true(outside:sum():item() > 0)
        assert.are.equal(0, max_abs(y[outside] - x[outside]))
        assert.are.equal(0, max_abs(lad[outside]))
        local xi, ladi = unconstrained_rational_quadratic_spline({ inputs = y,
            unnormalized_widths = uw, unnormalized_heights = uh,
            unnormalized_derivatives = ud, tail_bound = TB, inverse = true })
        assert.is_true(max_abs(xi - x) < 1e-5)
        assert_close_list(REF.ladi, L(ladi), 1e-4, "inverse logabsdet")
        assert.is_true(max_abs(ladi + lad) < 1e-4)
    end)

    it("unconstrained spline inverse of other points as PyTorch's (the quadratic root)",
        function()
        local uw, uh, ud = spline_inputs()
        local yb = fm({ B, D }, 0.8, 0.6, 2.5)
        local xb, ladb = unconstrained_rational_quadratic_spline({ inputs = yb,
            unnormalized_widths = uw, unnormalized_heights = uh,
            unnormalized_derivatives = ud, tail_bound = TB, inverse = true })
        assert_close_list(REF.inv_x, L(xb), 1e-5, "inverse outputs")
        assert_close_list(REF.inv_lad, L(ladb), 1e-4, "inverse logabsdet")
        -- the derivatives' pad is a copy: the caller's tensor keeps its size
        assert.are.same({ B, D, K - 1 }, ud:size())
    end)

    it("rational_quadratic_spline refuses inputs outside [left, right]", function()
        local uw, uh, ud = spline_inputs()
        assert.has_error(function()
            rational_quadratic_spline({ inputs = fm({ B, D }, 1.3, 0.1, 4.0),
                unnormalized_widths = uw, unnormalized_heights = uh,
                unnormalized_derivatives = F.pad(ud, { 1, 1 }), left = -TB, right = TB,
                bottom = -TB, top = TB })
        end, "InputOutsideDomain")
    end)

    local function make_flow()
        return PiecewiseRationalQuadraticCouplingTransform({ 1, 0, 1, 0 }, function(i, o)
            return MLP(i, o)
        end, { num_bins = K, tails = "linear", tail_bound = TB })
    end

    it("PiecewiseRationalQuadraticCouplingTransform forward and inverse as PyTorch's",
        function()
        local flow = make_flow()
        assert.are.same({ 2, 4 }, flow.identity_features:tolist())
        assert.are.same({ 1, 3 }, flow.transform_features:tolist())
        assert.are.same({ 28, 8 }, flow.transform_net.l2.weight:size())
        local x = fm({ B, D }, 1.3, 0.1, 4.0)
        local z, cl = flow(x)
        assert_close_list(REF.cz, L(z), 1e-5, "coupling outputs")
        assert_close_list(REF.cl, L(cl), 1e-4, "coupling logabsdet")
        local xr, cli = flow:inverse(z)
        assert.is_true(max_abs(xr - x) < 1e-5)
        assert_close_list(REF.cli, L(cli), 1e-4, "coupling inverse logabsdet")
    end)

    it("the flow loss -(log N(z) + logabsdet) and its gradients w.r.t. the MLP as PyTorch's",
        function()
        local flow = make_flow()
        local x = fm({ B, D }, 1.3, 0.1, 4.0)
        local z, cl = flow(x)
        -- logp = -0.5 * z.pow(2).sum(1) - 0.5 * D * np.log(2 * np.pi)
        local logp = -0.5 * z:pow(2):sum(2) - 0.5 * D * math.log(2 * math.pi)
        local loss = -(logp + cl):mean()
        assert.is_true(ported.close(loss:item(), REF.loss, 1e-5))
        loss:backward()
        local net = flow.transform_net
        assert_close_list(REF.g_l1_weight, L(net.l1.weight.grad), 1e-4, "l1.weight.grad")
        assert_close_list(REF.g_l1_bias, L(net.l1.bias.grad), 1e-4, "l1.bias.grad")
        assert_close_list(REF.g_l2_weight, L(net.l2.weight.grad), 1e-4, "l2.weight.grad")
        assert_close_list(REF.g_l2_bias, L(net.l2.bias.grad), 1e-4, "l2.bias.grad")
    end)
end)
