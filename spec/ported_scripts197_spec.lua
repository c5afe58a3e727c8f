-- ported_scripts197_spec.lua — state-spaces/s4's models/s4/s4d.py (S4DKernel: log_dt, C as
-- the view_as_real of a complex parameter, log_A_real, A_imag, register() with its _optim dict;
-- S4D: the FFT convolution with rfft / irfft at n = 2L, the D skip, GELU, dropout off (p 0:
-- nn.Identity), the Conv1d 1x1 + GLU output), ported line for line at tiny sizes (d_model 4,
-- d_state 8: 4 complex modes, L 16, batch 2). The Python line stands above each Lua line that
-- differs from it. Dims are 1-based.
-- register()'s `setattr(param, "_optim", {...})` is a Lua field on the parameter tensor
-- (`p._optim`), read back by the optimizer setup below (example.py's setup_optimizer, cut to
-- its two groups: the general parameters, and those with _optim, weight_decay 0).
-- Reference values: PyTorch 1.13 on the same weights (each parameter a formula over its flat
-- index, C too) and inputs: the kernel k, the layer output, an MSE loss, the gradients of the
-- input, log_dt, C and log_A_real, and every parameter after one AdamW step (lr 1e-2).
local tide = require("tide")
local nn = tide.nn
local einops = tide.einops

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- models/s4/s4d.py
---------------------------------------------------------------------------------------------
-- Python's 1j: a 0-d complex64 tensor, broadcast as a scalar (the dtype named: Lua 5.1's
-- tide.tensor(0.0) would be int64, which tide.complex refuses)
local F32 = { dtype = tide.float32 }
local J = tide.complex(tide.tensor(0, F32), tide.tensor(1, F32))

-- class S4DKernel(nn.Module):
local S4DKernel = nn.Module:extend("S4DKernel")
-- def __init__(self, d_model, N=64, dt_min=0.001, dt_max=0.1, lr=None):
function S4DKernel:init(d_model, opts)
    nn.Module.init(self)
    opts = opts or {}
    local N, dt_min, dt_max = opts.N or 64, opts.dt_min or 0.001, opts.dt_max or 0.1
    local lr = opts.lr
    -- Generate dt
    local H = d_model
    -- log_dt = torch.rand(H) * (
    --     math.log(dt_max) - math.log(dt_min)
    -- ) + math.log(dt_min)
    local log_dt = tide.rand(H) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)

    -- C = torch.randn(H, N // 2, dtype=torch.cfloat)   (N // 2: Lua 5.1 has no //)
    local C = tide.randn(H, math.floor(N / 2), { dtype = tide.cfloat })
    -- self.C = nn.Parameter(torch.view_as_real(C))
    self.C = nn.Parameter(tide.view_as_real(C))
    -- self.register("log_dt", log_dt, lr)
    self:register("log_dt", log_dt, lr)

    -- log_A_real = torch.log(0.5 * torch.ones(H, N//2))
    local log_A_real = tide.log(0.5 * tide.ones(H, math.floor(N / 2)))
    -- A_imag = math.pi * repeat(torch.arange(N//2), 'n -> h n', h=H)
    local A_imag = math.pi * einops.repeat_(tide.arange(math.floor(N / 2)), "n -> h n", { h = H })
    -- self.register("log_A_real", log_A_real, lr)
    self:register("log_A_real", log_A_real, lr)
    -- self.register("A_imag", A_imag, lr)
    self:register("A_imag", A_imag, lr)
end

-- def forward(self, L):
function S4DKernel:forward(L)
    -- returns: (..., c, L) where c is number of channels (default 1)

    -- Materialize parameters
    -- dt = torch.exp(self.log_dt) # (H)
    local dt = tide.exp(self.log_dt)
    -- C = torch.view_as_complex(self.C) # (H N)
    local C = tide.view_as_complex(self.C)
    -- A = -torch.exp(self.log_A_real) + 1j * self.A_imag # (H N)
    local A = -tide.exp(self.log_A_real) + J * self.A_imag

    -- Vandermonde multiplication
    -- dtA = A * dt.unsqueeze(-1)  # (H N)
    local dtA = A * dt:unsqueeze(-1)
    -- K = dtA.unsqueeze(-1) * torch.arange(L, device=A.device) # (H N L)
    local K = dtA:unsqueeze(-1) * tide.arange(L, { device = A.device })
    -- C = C * (torch.exp(dtA)-1.) / A
    C = C * (tide.exp(dtA) - 1.) / A
    -- K = 2 * torch.einsum('hn, hnl -> hl', C, torch.exp(K)).real
    K = 2 * tide.einsum("hn, hnl -> hl", C, tide.exp(K)).real

    return K
end

-- def register(self, name, tensor, lr=None):
function S4DKernel:register(name, tensor, lr)
    -- Register a tensor with a configurable learning rate and 0 weight decay

    -- if lr == 0.0:
    if lr == 0.0 then
        -- self.register_buffer(name, tensor)
        self:register_buffer(name, tensor)
    else
        -- self.register_parameter(name, nn.Parameter(tensor))
        self:register_parameter(name, nn.Parameter(tensor))

        -- optim = {"weight_decay": 0.0}
        local optim = { weight_decay = 0.0 }
        -- if lr is not None: optim["lr"] = lr
        if lr ~= nil then optim["lr"] = lr end
        -- setattr(getattr(self, name), "_optim", optim)   (a Lua field on the parameter tensor)
        self[name]._optim = optim
    end
end

-- class S4D(nn.Module):
local S4D = nn.Module:extend("S4D")
-- def __init__(self, d_model, d_state=64, dropout=0.0, transposed=True, **kernel_args):
function S4D:init(d_model, opts)
    nn.Module.init(self)
    opts = opts or {}
    local d_state, dropout = opts.d_state or 64, opts.dropout or 0.0
    local transposed = opts.transposed
    if transposed == nil then transposed = true end
    -- **kernel_args
    local kernel_args = { dt_min = opts.dt_min, dt_max = opts.dt_max, lr = opts.lr }

    self.h = d_model
    self.n = d_state
    self.d_output = self.h
    self.transposed = transposed

    -- self.D = nn.Parameter(torch.randn(self.h))
    self.D = nn.Parameter(tide.randn(self.h))

    -- SSM Kernel
    -- self.kernel = S4DKernel(self.h, N=self.n, **kernel_args)
    kernel_args.N = self.n
    self.kernel = S4DKernel(self.h, kernel_args)

    -- Pointwise
    self.activation = nn.GELU()
    -- dropout_fn = nn.Dropout2d # NOTE: bugged in PyTorch 1.11
    -- dropout_fn = DropoutNd
    -- (src.models.nn.DropoutNd is not ported here, ported_scripts124_spec.lua has it: this
    -- port runs dropout 0, where s4d.py takes nn.Identity; not a tide gap)
    -- self.dropout = dropout_fn(dropout) if dropout > 0.0 else nn.Identity()
    assert(dropout == 0.0, "this port runs S4D with dropout 0")
    self.dropout = nn.Identity()

    -- position-wise output transform to mix features
    self.output_linear = nn.Sequential(
        -- nn.Conv1d(self.h, 2*self.h, kernel_size=1),
        nn.Conv1d(self.h, 2 * self.h, { kernel_size = 1 }),
        -- nn.GLU(dim=-2),
        nn.GLU({ dim = -2 })
    )
end

-- def forward(self, u, **kwargs): # absorbs return_output and transformer src mask
function S4D:forward(u)
    -- Input and output shape (B, H, L)
    -- if not self.transposed: u = u.transpose(-1, -2)
    if not self.transposed then u = u:transpose(-1, -2) end
    -- L = u.size(-1)
    local L = u:size(-1)

    -- Compute SSM Kernel
    -- k = self.kernel(L=L) # (H L)
    local k = self.kernel(L)

    -- Convolution
    -- k_f = torch.fft.rfft(k, n=2*L) # (H L)
    local k_f = tide.fft.rfft(k, { n = 2 * L })
    -- u_f = torch.fft.rfft(u, n=2*L) # (B H L)
    local u_f = tide.fft.rfft(u, { n = 2 * L })
    -- y = torch.fft.irfft(u_f*k_f, n=2*L)[..., :L] # (B H L)
    local y = tide.fft.irfft(u_f * k_f, { n = 2 * L })[{ "...", { 1, L } }]

    -- Compute D term in state space equation - essentially a skip connection
    -- y = y + u * self.D.unsqueeze(-1)
    y = y + u * self.D:unsqueeze(-1)

    -- y = self.dropout(self.activation(y))
    y = self.dropout(self.activation(y))
    -- y = self.output_linear(y)
    y = self.output_linear(y)
    -- if not self.transposed: y = y.transpose(-1, -2)
    if not self.transposed then y = y:transpose(-1, -2) end
    -- return y, None # Return a dummy state to satisfy this repo's interface, ...
    return y, nil
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
local H, NS, L, B = 4, 8, 16, 2
local N2 = math.floor(NS / 2)

-- torch.arange(prod(shape)).float().view(*shape)
local function idx(...)
    local n = 1
    for _, s in ipairs({ ... }) do n = n * s end
    return tide.arange(n):float():view(...)
end

-- the reference script's weights: each a formula over its flat index
local function fill(m)
    tide.no_grad(function()
        local kr = m.kernel
        m.D:copy_(0.5 * tide.cos(0.9 * idx(H)))
        kr.C:copy_(0.5 * tide.sin(0.7 * idx(H, N2, 2) + 0.3))
        kr.log_dt:copy_(math.log(0.01) + (math.log(0.2) - math.log(0.01)) * idx(H) / (H - 1))
        kr.log_A_real:copy_(math.log(0.5) + 0.1 * tide.cos(idx(H, N2)))
        kr.A_imag:copy_(math.pi * einops.repeat_(tide.arange(N2), "n -> h n", { h = H }))
        m.output_linear[1].weight:copy_(0.3 * tide.sin(1.3 * idx(2 * H, H, 1) + 0.5))
        m.output_linear[1].bias:copy_(0.1 * tide.cos(idx(2 * H)))
    end)
end

local function flat(t)
    return t:detach():flatten():tolist()
end

-- got agrees with want to tol times want's largest magnitude (at least 1)
local function assert_scaled(want, got, tol, what)
    local scale = 1e-30
    for i = 1, #want do scale = math.max(scale, math.abs(want[i])) end
    local s = {}
    for i = 1, #want do s[i] = want[i] / scale end
    local g = {}
    for i = 1, #got do g[i] = got[i] / scale end
    assert_close_list(s, g, tol, what)
end

-- PyTorch 1.13's values (the same module, weights and inputs in a /tmp script)
local REF = {
    k = {
        0.00401229877, 0.00505160354, 0.00614235923, 0.00727393385, 0.00843534805,
        0.00961534772, 0.0108025242, 0.0119854026, 0.0131525462, 0.0142926453,
        0.0153946243, 0.0164477341, 0.0174416415, 0.0183665082, 0.0192130879,
        0.01997279, 0.0160909481, 0.0203122534, 0.0241480246, 0.0271655694,
        0.0289802477, 0.0292823277, 0.0278584678, 0.0246065408, 0.0195430052,
        0.0128023876, 0.0046290718, -0.00463789701, -0.0145859588, -0.0247546248,
        -0.0346637964, -0.0438430421, 0.0272027962, 0.00175777078, -0.0439747497,
        -0.101791888, -0.156758159, -0.1926485, -0.198311895, -0.172171056,
        -0.122932449, -0.0662591606, -0.0188813824, 0.00737508759, 0.00926707126,
        -0.00775360595, -0.0327068865, -0.0539312363, -0.178281456, -0.529680669,
        -0.331853598, 0.0168140754, 0.0169786476, -0.0872613788, -0.110355973,
        -0.132432967, -0.0679252148, 0.032139793, -0.0554687381, -0.188538879,
        -0.115137197, 0.0124000497, 0.00721602887, -0.0314892754,
    },
    y = {
        -0.00627237605, -0.0288067982, -0.00188347185, 0.0745857656, 0.120191492,
        0.130126908, 0.122992828, 0.108888038, 0.0922439992, 0.0763946772,
        0.0662941113, 0.0556971431, 0.0302975122, -0.00325905718, -0.0420323499,
        -0.0772491395, 0.0143432384, 0.00196642661, 0.00093957287, 0.0139134321,
        0.0261840671, 0.033137735, 0.0352072343, 0.0328846797, 0.0279589444,
        0.0230073258, 0.0197292697, 0.0161530003, 0.00905932393, 0.00096635829,
        -0.00492050685, -0.00403117761, 0.024157336, 0.0341632813, 0.00665984722,
        -0.0634355992, -0.106956385, -0.113643043, -0.103137456, -0.0877409801,
        -0.0719119683, -0.0576446317, -0.0489608534, -0.0402274728, -0.0190053228,
        0.00806513336, 0.0398177393, 0.072658658, 0.00505971722, 0.0286571607,
        0.00236666482, -0.07310009, -0.11922726, -0.130862832, -0.12500146,
        -0.111002617, -0.093736887, -0.0772749558, -0.0667920932, -0.055803854,
        -0.0299649499, 0.00369763118, 0.0420948751, 0.0772759393, -0.0158214532,
        -0.0791688263, -0.138766676, -0.149858713, -0.125279427, -0.0790099725,
        -0.0177404005, 0.0422973819, 0.089796029, 0.113990687, 0.114474721,
        0.105429634, 0.0936796367, 0.0819552243, 0.0715324208, 0.0581109636,
        0.0247720294, 0.0120293675, 0.00248554139, 0.00305569405, 0.0119137531,
        0.0279871207, 0.0499068759, 0.0710739195, 0.0832441375, 0.0796797052,
        0.0627680868, 0.0445108302, 0.0329636596, 0.0279646628, 0.0252449363,
        0.0212424677, 0.0444903597, 0.0917758346, 0.131299183, 0.140647814,
        0.131537244, 0.109818906, 0.0735141858, 0.0279485323, -0.019302221,
        -0.0540830977, -0.0694686025, -0.0737451091, -0.0693494827, -0.0597959571,
        -0.0500808991, -0.0383695699, 0.0135735143, 0.0800070465, 0.142304674,
        0.154443175, 0.129542232, 0.0806800053, 0.0128860539, -0.0560149215,
        -0.109877408, -0.133181974, -0.12705569, -0.111681052, -0.0966520086,
        -0.0839735344, -0.0732528642, -0.0593439788,
    },
    loss = 0.0221398771,
    u_grad = {
        -0.000159069707, -0.000186815814, -9.97313327e-05, 0.00013558795, 0.000372160663,
        0.000497482833, 0.000491502928, 0.000379402714, 0.000219290712, 7.8639081e-05,
        -3.61233924e-06, -3.76716234e-05, -5.00200549e-05, -5.64070506e-05, -6.36414043e-05,
        -6.60232326e-05, 9.05886554e-05, 0.000116731215, 0.000203192656, 0.000359871832,
        0.000450062973, 0.000421234086, 0.00030478905, 0.000152008026, 1.33163012e-05,
        -7.43643468e-05, -9.75022849e-05, -7.73934153e-05, -4.72596766e-05, -1.90916307e-05,
        8.37485459e-08, 1.19305741e-05, 7.92876672e-05, 0.000124003869, 0.000132261019,
        0.000111352558, 7.75447697e-05, 4.20995639e-05, 1.01514142e-05, -1.82496115e-05,
        -4.21403238e-05, -5.604135e-05, -5.53033278e-05, -4.21451587e-05, -2.41293037e-05,
        -1.05424087e-05, -8.38173492e-06, -1.70057556e-05, -0.000619252794, -8.90196825e-05,
        0.000476711779, 0.000594485144, 0.000196564011, -0.00014919418, -0.000267830648,
        -0.000220652495, -0.00010416047, -3.36671073e-05, -0.000102692495, -0.000291737175,
        -0.00044910569, -0.000417213072, -0.000247263175, -7.69080871e-05, -4.75882953e-05,
        -5.30212856e-05, -6.10517309e-05, -5.27788688e-05, -1.84007458e-05, 3.48556496e-05,
        8.85528862e-05, 0.000105520157, 6.84804545e-05, -1.4000987e-05, -9.57832744e-05,
        -0.000122250698, -9.14149787e-05, -3.4879653e-05, 1.18984863e-05, 3.39972357e-05,
        -7.16068243e-05, -5.2352596e-05, -3.92851653e-05, -1.82187214e-05, 2.55046552e-06,
        1.40608736e-05, 1.69344767e-05, 1.37282477e-05, 1.49928201e-05, 2.37501408e-05,
        4.40039512e-05, 9.03939072e-05, 0.000153717439, 0.000207913457, 0.000229494239,
        0.000207414982, 0.000103899802, 0.000138078205, 0.000122724901, 6.78565993e-05,
        -2.52971404e-07, -5.36791304e-05, -7.61283663e-05, -7.07355721e-05, -5.30629768e-05,
        -3.86998254e-05, -3.15396755e-05, -2.53204598e-05, -1.59981737e-05, -6.70384361e-06,
        -1.59451406e-06, -4.70395946e-07, -0.000329492963, -0.000348044006, -0.000275292055,
        -8.31937577e-05, 5.57063431e-05, 6.06473077e-05, 1.90295723e-05, 1.21706762e-06,
        5.31150363e-06, 2.00937975e-05, 2.35687075e-05, -1.5605081e-05, -2.10592516e-05,
        6.60894293e-05, 0.000130982648, 0.00014227198,
    },
    log_dt_grad = {
        0.000131705237, 0.0015970848, -0.00049695163, 0.00100031844,
    },
    C_grad = {
        0.000322398526, 0, 0.000322154781, -2.07918783e-05, 0.000321127387,
        -4.20242432e-05, 0.000318639912, -6.39742939e-05, 0.000781410374, 0,
        0.000912621093, 1.74266897e-05, 0.00109911954, -0.000248274649, 0.00100454397,
        -0.000703394238, -0.000276744802, 0, -0.000440513249, -0.000258735905,
        -0.000979500473, 0.000118154989, -0.00054403831, 0.000747381127, 9.84737635e-05,
        0, -0.0012919585, 0.000447580591, -0.00051722303, 0.000976239215,
        -5.90528216e-05, 0.000589148724,
    },
    log_A_real_grad = {
        -5.38437234e-07, -1.6963387e-06, -1.58591675e-07, 1.34964296e-06, -2.39050996e-06,
        -2.49976565e-05, -2.39001656e-05, -1.77125321e-06, 1.32987298e-05, 2.72166981e-05,
        6.98742224e-05, 3.62644932e-05, 0.000278293039, -7.14377238e-05, -0.00010890195,
        -1.40323227e-05,
    },
    A_imag_grad = {
        -2.77454092e-06, -2.3827015e-06, 2.0846735e-06, 3.68536803e-06, 4.25300095e-06,
        1.4106161e-05, 8.0108839e-06, 9.68281674e-05, 1.1043041e-05, -5.29841273e-05,
        6.77352073e-05, -1.64599223e-05, 0.000450797146, -3.25019391e-05, 7.49136525e-05,
        6.76305535e-06,
    },
    D = {
        0.489950031, 0.300773919, -0.103589706, -0.441990852,
    },
    kernel_C = {
        0.137745634, 0.420693398, 0.4857831, 0.347693056, 0.0107886121,
        -0.295900702, -0.498715878, -0.431684643, -0.196919456, 0.155755058,
        0.415175945, 0.484635383, 0.321451634, 0.0223862603, -0.322504103,
        -0.480419219, -0.427682668, -0.179096818, 0.173720434, 0.439537644,
        0.503336489, 0.315112263, 0.0139811039, -0.329021156, -0.501982152,
        -0.433557928, -0.161224172, 0.161639974, 0.443778366, 0.481904387,
        0.328678012, -0.0144240875,
    },
    kernel_log_dt = {
        -4.61516953, -3.61659288, -2.59801579, -1.61943781,
    },
    kernel_log_A_real = {
        -0.583329499, -0.629175544, -0.725355029, -0.802072883, -0.748553216,
        -0.654784977, -0.587134361, -0.60781312, -0.717689693, -0.794256568,
        -0.78705287, -0.702701867, -0.61876142, -0.592403889, -0.669474363,
        -0.759123087,
    },
    kernel_A_imag = {
        0.00996408705, 3.15155101, 6.27323341, 9.41480541, -0.00997654162,
        3.1315999, 6.27319813, 9.41477871, -0.00999095198, 3.15159082,
        6.27318716, 9.43477154, -0.00999977812, 3.15158963, 6.27318668,
        9.41479301,
    },
    output_linear_0_weight = {
        0.133813322, 0.282125145, 0.00247302931, -0.275452077, -0.155190051,
        0.207075909, 0.280624539, -0.0622926205, -0.288601041, -0.0974581316,
        0.25111106, 0.226452142, -0.104609855, -0.287768155, -0.0546955466,
        0.263856322, 0.181208178, -0.181559697, -0.292987615, 0.010160597,
        0.303776026, 0.147003889, -0.210478514, -0.264948368, 0.0740723535,
        0.289944351, 0.0863960981, -0.269060373, -0.224999577, 0.134046733,
        0.3020612, 0.0222057141,
    },
    output_linear_0_bias = {
        0.0899901092, 0.04402484, -0.0516103953, -0.0889893621, -0.075357765,
        0.0383594632, 0.086007528, 0.0653827861,
    },
}

describe("state-spaces/s4 s4d.py S4D (ported_scripts197)", function()
    it("register(): _optim on the parameters, lr 0 makes buffers; random init in range", function()
        tide.manual_seed(0)
        local kr = S4DKernel(H, { N = NS, lr = 1e-3 })
        assert.same({ H, N2, 2 }, kr.C.shape)
        assert.same({ weight_decay = 0.0, lr = 1e-3 }, kr.log_dt._optim)
        assert.same({ weight_decay = 0.0, lr = 1e-3 }, kr.A_imag._optim)
        assert.is_nil(kr.C._optim)
        for _, v in ipairs(flat(kr.log_dt)) do
            assert.is_true(v >= math.log(0.001) and v <= math.log(0.1))
        end
        -- A_imag = pi * n in every row
        assert_close_list({ 0, math.pi, 2 * math.pi, 3 * math.pi }, flat(kr.A_imag[H]), 1e-6,
            "A_imag")
        assert.equal(4, #kr:parameters())
        local kb = S4DKernel(H, { N = NS, lr = 0.0 })
        assert.equal(1, #kb:parameters())
        assert.equal(3, #kb:buffers())
        assert.same({ weight_decay = 0.0 }, S4DKernel(H, { N = NS }).log_A_real._optim)
    end)

    it("kernel, output, loss, gradients and one AdamW step match PyTorch", function()
        tide.manual_seed(0)
        local m = S4D(H, { d_state = NS, dropout = 0.0 })
        fill(m)
        m:eval()
        local u = tide.sin(0.37 * idx(B, H, L) + 0.1):requires_grad_()
        local target = 0.2 * tide.cos(0.5 * idx(B, H, L))

        local k = m.kernel(L)
        assert.same({ H, L }, k.shape)
        assert_scaled(REF.k, flat(k), 2e-5, "k")
        local y = m(u)
        assert.same({ B, H, L }, y.shape)
        assert_scaled(REF.y, flat(y), 2e-5, "y")
        -- loss = ((y - target) ** 2).mean()
        local loss = ((y - target) ^ 2):mean()
        assert_finite(loss:item(), "loss")
        assert_scaled({ REF.loss }, { loss:item() }, 1e-5, "loss")
        loss:backward()

        local kr = m.kernel
        assert_scaled(REF.u_grad, flat(u.grad), 1e-4, "u.grad")
        assert_scaled(REF.log_dt_grad, flat(kr.log_dt.grad), 1e-4, "log_dt.grad")
        assert_scaled(REF.C_grad, flat(kr.C.grad), 1e-4, "C.grad")
        assert_scaled(REF.log_A_real_grad, flat(kr.log_A_real.grad), 1e-4, "log_A_real.grad")
        assert_scaled(REF.A_imag_grad, flat(kr.A_imag.grad), 1e-4, "A_imag.grad")

        -- params = list(m.parameters()); plain = [p for p in params if not hasattr(p, "_optim")]
        local params, plain, special = m:parameters(), {}, {}
        for _, p in ipairs(params) do
            if p._optim == nil then plain[#plain + 1] = p else special[#special + 1] = p end
        end
        assert.equal(4, #plain)
        assert.equal(3, #special)
        -- opt = torch.optim.AdamW(plain, lr=1e-2)
        local opt = tide.optim.AdamW(plain, { lr = 1e-2 })
        -- opt.add_param_group({"params": [... hasattr(p, "_optim")], **{"weight_decay": 0.0}})
        local group = { params = special }
        for kk, v in pairs(special[1]._optim) do group[kk] = v end
        opt:add_param_group(group)
        assert.equal(0.0, opt.param_groups[2].weight_decay)
        assert.equal(1e-2, opt.param_groups[2].lr)
        opt:step()

        local names = {
            { "D", m.D }, { "kernel_C", kr.C }, { "kernel_log_dt", kr.log_dt },
            { "kernel_log_A_real", kr.log_A_real }, { "kernel_A_imag", kr.A_imag },
            { "output_linear_0_weight", m.output_linear[1].weight },
            { "output_linear_0_bias", m.output_linear[1].bias },
        }
        for _, np_ in ipairs(names) do
            assert_close_list(REF[np_[1]], flat(np_[2]), 2e-5, np_[1])
        end
    end)

    it("transposed = false takes (B, L, H) and gives it back", function()
        tide.manual_seed(0)
        local m = S4D(H, { d_state = NS, transposed = false })
        fill(m)
        local u = tide.sin(0.37 * idx(B, H, L) + 0.1)
        local y1 = m(u:transpose(-1, -2))
        assert.same({ B, L, H }, y1.shape)
        m.transposed = true
        assert_scaled(REF.y, flat(m(u)), 2e-5, "y")
        assert_scaled(flat(m(u):transpose(-1, -2)), flat(y1), 1e-6, "y transposed")
    end)
end)
