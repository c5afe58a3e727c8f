-- ported_scripts93_spec.lua — ElementAI/N-BEATS' models/nbeats.py (NBeatsBlock, NBeats with its
-- residual loop over flipped inputs, GenericBasis, TrendBasis, SeasonalityBasis),
-- experiments/model.py's generic / interpretable builders, common/torch/losses.py's mape_loss,
-- smape_2_loss, mase_loss and common/torch/ops.py's divide_no_nan; and cure-lab/LTSF-Linear's
-- models/DLinear.py (moving_avg, series_decomp, Model with individual True and False) and
-- models/NLinear.py, ported line for line at tiny sizes (input 8, horizon 4). The Python line
-- stands above each Lua line that differs from it. Dims are 1-based. Reference values come from
-- the same code run under PyTorch 1.13 with the same weights (init below) and series.
local tide = require("tide")
local nn = tide.nn

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list
local unpack = table.unpack or unpack -- luacheck: ignore

local function flat(t)
    return t:detach():reshape(-1):totable()
end

-- every parameter that trains gets 0.3 * sin(0.37 j + 0.91 k), k its 1-based position in
-- named_parameters() (the frozen bases count too), j its 0-based flat index
local function init(model)
    local k = 0
    for _, p in ipairs(model:named_parameters()) do
        k = k + 1
        local param = p[2]
        if param.requires_grad then
            local v = {}
            for j = 0, param:numel() - 1 do
                v[#v + 1] = 0.3 * math.sin(0.37 * j + 0.91 * k)
            end
            tide.no_grad(function() param:copy_(tide.tensor(v):view(param:size())) end)
        end
    end
    return k
end

---------------------------------------------------------------------------------------------
-- 1. ElementAI/N-BEATS
---------------------------------------------------------------------------------------------
-- class NBeatsBlock(t.nn.Module):
local NBeatsBlock = nn.Module:extend("NBeatsBlock")
-- def __init__(self, input_size, theta_size: int, basis_function: t.nn.Module, layers: int,
--              layer_size: int):
function NBeatsBlock:init(input_size, theta_size, basis_function, layers, layer_size)
    -- self.layers = t.nn.ModuleList(
    --     [t.nn.Linear(in_features=input_size, out_features=layer_size)] +
    --     [t.nn.Linear(in_features=layer_size, out_features=layer_size)
    --      for _ in range(layers - 1)])
    local list = { nn.Linear(input_size, layer_size) }
    for _ = 1, layers - 1 do
        list[#list + 1] = nn.Linear(layer_size, layer_size)
    end
    self.layers = nn.ModuleList(list)
    -- self.basis_parameters = t.nn.Linear(in_features=layer_size, out_features=theta_size)
    self.basis_parameters = nn.Linear(layer_size, theta_size)
    self.basis_function = basis_function
end

function NBeatsBlock:forward(x)
    local block_input = x
    -- for layer in self.layers:
    for _, layer in ipairs(self.layers) do
        -- block_input = t.relu(layer(block_input))
        block_input = tide.relu(layer(block_input))
    end
    local basis_parameters = self.basis_parameters(block_input)
    return self.basis_function(basis_parameters)
end

-- class NBeats(t.nn.Module):
local NBeats = nn.Module:extend("NBeats")
function NBeats:init(blocks)
    self.blocks = blocks
end

-- def forward(self, x: t.Tensor, input_mask: t.Tensor) -> t.Tensor:
function NBeats:forward(x, input_mask)
    -- residuals = x.flip(dims=(1,))
    local residuals = x:flip({ 2 })
    -- input_mask = input_mask.flip(dims=(1,))
    input_mask = input_mask:flip({ 2 })
    -- forecast = x[:, -1:]
    local forecast = x[{ {}, { -1, -1 } }]
    -- for i, block in enumerate(self.blocks):
    for _, block in ipairs(self.blocks) do
        local backcast, block_forecast = block(residuals)
        residuals = (residuals - backcast) * input_mask
        forecast = forecast + block_forecast
    end
    return forecast
end

-- class GenericBasis(t.nn.Module):
local GenericBasis = nn.Module:extend("GenericBasis")
function GenericBasis:init(backcast_size, forecast_size)
    self.backcast_size = backcast_size
    self.forecast_size = forecast_size
end

function GenericBasis:forward(theta)
    -- return theta[:, :self.backcast_size], theta[:, -self.forecast_size:]
    return theta[{ {}, { 1, self.backcast_size } }], theta[{ {}, { -self.forecast_size, -1 } }]
end

-- np.concatenate([np.power(np.arange(size, dtype=np.float) / size, i)[None, :]
--                 for i in range(polynomial_size)]) as float32
local function polynomial_time(size, polynomial_size)
    local rows = {}
    for i = 0, polynomial_size - 1 do
        rows[#rows + 1] = (tide.arange(size, { dtype = "float64" }) / size):pow(i):unsqueeze(1)
    end
    return tide.cat(rows):float()
end

-- class TrendBasis(t.nn.Module):
local TrendBasis = nn.Module:extend("TrendBasis")
function TrendBasis:init(degree_of_polynomial, backcast_size, forecast_size)
    self.polynomial_size = degree_of_polynomial + 1 -- degree of polynomial with constant term
    -- self.backcast_time = t.nn.Parameter(t.tensor(np.concatenate([...])), requires_grad=False)
    self.backcast_time = nn.Parameter(polynomial_time(backcast_size, self.polynomial_size),
        { requires_grad = false })
    self.forecast_time = nn.Parameter(polynomial_time(forecast_size, self.polynomial_size),
        { requires_grad = false })
end

function TrendBasis:forward(theta)
    -- backcast = t.einsum('bp,pt->bt', theta[:, self.polynomial_size:], self.backcast_time)
    local backcast = tide.einsum("bp,pt->bt", theta[{ {}, { self.polynomial_size + 1, -1 } }],
        self.backcast_time)
    -- forecast = t.einsum('bp,pt->bt', theta[:, :self.polynomial_size], self.forecast_time)
    local forecast = tide.einsum("bp,pt->bt", theta[{ {}, { 1, self.polynomial_size } }],
        self.forecast_time)
    return backcast, forecast
end

-- class SeasonalityBasis(t.nn.Module):
local SeasonalityBasis = nn.Module:extend("SeasonalityBasis")
function SeasonalityBasis:init(harmonics, backcast_size, forecast_size)
    -- self.frequency = np.append(np.zeros(1, dtype=np.float32),
    --                            np.arange(harmonics, harmonics / 2 * forecast_size,
    --                                      dtype=np.float32) / harmonics)[None, :]
    self.frequency = tide.cat({ tide.zeros(1),
        tide.arange(harmonics, harmonics / 2 * forecast_size, { dtype = "float32" }) / harmonics
    }):unsqueeze(1)
    -- backcast_grid = -2 * np.pi * (
    --         np.arange(backcast_size, dtype=np.float32)[:, None] / forecast_size) * self.frequency
    local backcast_grid = -2 * math.pi * (
        tide.arange(backcast_size, { dtype = "float32" }):unsqueeze(2) / forecast_size)
        * self.frequency
    -- forecast_grid = 2 * np.pi * (
    --         np.arange(forecast_size, dtype=np.float32)[:, None] / forecast_size) * self.frequency
    local forecast_grid = 2 * math.pi * (
        tide.arange(forecast_size, { dtype = "float32" }):unsqueeze(2) / forecast_size)
        * self.frequency
    -- self.backcast_cos_template = t.nn.Parameter(t.tensor(np.transpose(np.cos(backcast_grid)),
    --                                             dtype=t.float32), requires_grad=False)
    self.backcast_cos_template = nn.Parameter(backcast_grid:cos():t():contiguous(),
        { requires_grad = false })
    self.backcast_sin_template = nn.Parameter(backcast_grid:sin():t():contiguous(),
        { requires_grad = false })
    self.forecast_cos_template = nn.Parameter(forecast_grid:cos():t():contiguous(),
        { requires_grad = false })
    self.forecast_sin_template = nn.Parameter(forecast_grid:sin():t():contiguous(),
        { requires_grad = false })
end

function SeasonalityBasis:forward(theta)
    -- params_per_harmonic = theta.shape[1] // 4
    local pph = math.floor(theta:size(2) / 4)
    -- backcast_harmonics_cos = t.einsum('bp,pt->bt',
    --     theta[:, 2 * params_per_harmonic:3 * params_per_harmonic], self.backcast_cos_template)
    local backcast_harmonics_cos = tide.einsum("bp,pt->bt",
        theta[{ {}, { 2 * pph + 1, 3 * pph } }], self.backcast_cos_template)
    -- backcast_harmonics_sin = t.einsum('bp,pt->bt', theta[:, 3 * params_per_harmonic:],
    --     self.backcast_sin_template)
    local backcast_harmonics_sin = tide.einsum("bp,pt->bt", theta[{ {}, { 3 * pph + 1, -1 } }],
        self.backcast_sin_template)
    local backcast = backcast_harmonics_sin + backcast_harmonics_cos
    -- forecast_harmonics_cos = t.einsum('bp,pt->bt',
    --     theta[:, :params_per_harmonic], self.forecast_cos_template)
    local forecast_harmonics_cos = tide.einsum("bp,pt->bt", theta[{ {}, { 1, pph } }],
        self.forecast_cos_template)
    -- forecast_harmonics_sin = t.einsum('bp,pt->bt',
    --     theta[:, params_per_harmonic:2 * params_per_harmonic], self.forecast_sin_template)
    local forecast_harmonics_sin = tide.einsum("bp,pt->bt", theta[{ {}, { pph + 1, 2 * pph } }],
        self.forecast_sin_template)
    local forecast = forecast_harmonics_sin + forecast_harmonics_cos
    return backcast, forecast
end

-- experiments/model.py: def interpretable(input_size, output_size, trend_blocks, trend_layers,
--     trend_layer_size, degree_of_polynomial, seasonality_blocks, seasonality_layers,
--     seasonality_layer_size, num_of_harmonics):
local function interpretable(o)
    local trend_block = NBeatsBlock(o.input_size, 2 * (o.degree_of_polynomial + 1),
        TrendBasis(o.degree_of_polynomial, o.input_size, o.output_size),
        o.trend_layers, o.trend_layer_size)
    -- theta_size=4 * int(np.ceil(num_of_harmonics / 2 * output_size) - (num_of_harmonics - 1))
    local seasonality_block = NBeatsBlock(o.input_size,
        4 * math.floor(math.ceil(o.num_of_harmonics / 2 * o.output_size)
            - (o.num_of_harmonics - 1)),
        SeasonalityBasis(o.num_of_harmonics, o.input_size, o.output_size),
        o.seasonality_layers, o.seasonality_layer_size)
    -- return NBeats(t.nn.ModuleList([trend_block for _ in range(trend_blocks)] +
    --                               [seasonality_block for _ in range(seasonality_blocks)]))
    local blocks = {}
    for _ = 1, o.trend_blocks do blocks[#blocks + 1] = trend_block end
    for _ = 1, o.seasonality_blocks do blocks[#blocks + 1] = seasonality_block end
    return NBeats(nn.ModuleList(blocks))
end

-- def generic(input_size: int, output_size: int, stacks: int, layers: int, layer_size: int):
local function generic(input_size, output_size, stacks, layers, layer_size)
    local blocks = {}
    for _ = 1, stacks do
        blocks[#blocks + 1] = NBeatsBlock(input_size, input_size + output_size,
            GenericBasis(input_size, output_size), layers, layer_size)
    end
    return NBeats(nn.ModuleList(blocks))
end

-- common/torch/ops.py: def divide_no_nan(a, b):
local function divide_no_nan(a, b)
    local result = a / b
    -- result[result != result] = .0
    result[result:ne(result)] = 0.0
    -- result[result == np.inf] = .0
    result[result:eq(math.huge)] = 0.0
    return result
end

-- common/torch/losses.py
local function mape_loss(forecast, target, mask)
    local weights = divide_no_nan(mask, target)
    -- return t.mean(t.abs((forecast - target) * weights))
    return tide.mean(tide.abs((forecast - target) * weights))
end

local function smape_2_loss(forecast, target, mask)
    -- return 200 * t.mean(divide_no_nan(t.abs(forecast - target),
    --                                   t.abs(forecast.data) + t.abs(target.data)) * mask)
    return 200 * tide.mean(divide_no_nan(tide.abs(forecast - target),
        tide.abs(forecast.data) + tide.abs(target.data)) * mask)
end

local function mase_loss(insample, freq, forecast, target, mask)
    -- masep = t.mean(t.abs(insample[:, freq:] - insample[:, :-freq]), dim=1)
    local masep = tide.mean(tide.abs(insample[{ {}, { freq + 1, -1 } }] -
        insample[{ {}, { 1, -freq - 1 } }]), { dim = 2 })
    -- masked_masep_inv = divide_no_nan(mask, masep[:, None])
    local masked_masep_inv = divide_no_nan(mask, masep[{ {}, tide.newaxis }])
    return tide.mean(tide.abs(target - forecast) * masked_masep_inv)
end

-- the series: sin(a j) + 0.1 j over the flat index j
local function series(shape, a)
    local n, v = shape[1] * shape[2], {}
    for j = 0, n - 1 do v[#v + 1] = math.sin(a * j) + 0.1 * j end
    return tide.tensor(v):view(shape)
end

local function nbeats_data()
    local x = series({ 3, 8 }, 0.7)
    -- mask = t.ones(3, 8); mask[1, 6:] = 0
    local mask = tide.ones(3, 8)
    mask[{ 2, { 7, -1 } }] = 0
    -- y = series((3, 4), 1.3); y[0, 1] = 0; y[2, 3] = 0
    local y = series({ 3, 4 }, 1.3)
    y[{ 1, 2 }] = 0
    y[{ 3, 4 }] = 0
    -- ymask = t.ones(3, 4); ymask[1, 2] = 0; ymask[2, 3] = 0
    local ymask = tide.ones(3, 4)
    ymask[{ 2, 3 }] = 0
    ymask[{ 3, 4 }] = 0
    -- insample = x.clone(); insample[2] = 2.0   (a flat row: its masep is 0)
    local insample = x:clone()
    insample[3] = 2.0
    return x, mask, y, ymask, insample
end

describe("ElementAI/N-BEATS models/nbeats.py and common/torch/losses.py", function()
    it("TrendBasis' and SeasonalityBasis' frozen buffers match PyTorch", function()
        local tb = TrendBasis(2, 8, 4)
        assert.same({ 3, 8 }, tb.backcast_time.shape)
        assert.is_false(tb.backcast_time.requires_grad)
        assert_close_list({ 1, 1, 1, 1, 1, 1, 1, 1, 0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875,
            0, 0.015625, 0.0625, 0.140625, 0.25, 0.390625, 0.5625, 0.765625 },
            flat(tb.backcast_time), 1e-6, "backcast_time")
        assert_close_list({ 1, 1, 1, 1, 0, 0.25, 0.5, 0.75, 0, 0.0625, 0.25, 0.5625 },
            flat(tb.forecast_time), 1e-6, "forecast_time")
        local sb = SeasonalityBasis(2, 8, 4)
        assert_close_list({ 0, 1, 1.5 }, flat(sb.frequency), 1e-6, "frequency")
        assert.same({ 3, 8 }, sb.backcast_cos_template.shape)
        local r = math.sqrt(0.5)
        assert_close_list({ 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, -1, 0, 1, 0, -1, 0,
            1, -r, 0, r, -1, r, 0, -r }, flat(sb.backcast_cos_template), 1e-5, "backcast_cos")
        assert_close_list({ 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0, 1, 0, -1, 0, 1,
            0, -r, 1, -r, 0, r, -1, r }, flat(sb.backcast_sin_template), 1e-5, "backcast_sin")
        assert_close_list({ 1, 1, 1, 1, 1, 0, -1, 0, 1, -r, 0, r },
            flat(sb.forecast_cos_template), 1e-5, "forecast_cos")
        assert_close_list({ 0, 0, 0, 0, 0, 1, 0, -1, 0, r, -1, r },
            flat(sb.forecast_sin_template), 1e-5, "forecast_sin")
    end)

    it("the losses with zeros in the denominators (divide_no_nan) match PyTorch", function()
        local fz = tide.tensor({ { 0, 1, -2, 3 }, { 0, 0.5, 2, 0 } })
        local yz = tide.tensor({ { 0, 0, 2, 1 }, { 1, 0, 2, 0 } })
        local mz = tide.tensor({ { 1, 1, 1, 0 }, { 1, 0, 1, 1 } })
        local ins = tide.tensor({ { 1, 2, 3, 4 }, { 5, 5, 5, 5 } })
        assert_close_list({ 75, 0.375, 0.625 }, { smape_2_loss(fz, yz, mz):item(),
            mape_loss(fz, yz, mz):item(), mase_loss(ins, 1, fz, yz, mz):item() }, 1e-6, "losses")
    end)

    it("generic: forecast and losses match PyTorch; 2 Adam steps on smape_2 lower it", function()
        local x, mask, y, ymask, insample = nbeats_data()
        local m = generic(8, 4, 2, 2, 6)
        assert.equal(12, init(m))
        m:eval()
        local f = m(x, mask)
        assert.same({ 3, 4 }, f.shape)
        assert_close_list({ 0.0087743104, 0.14548138, 0.37198821, -0.44364476, 0.18308437,
            1.251875, 1.7569736, -0.32758948, 0.91896147, 2.7209122, 3.4090896, 0.37000483 },
            flat(f), 1e-4, "generic forecast")
        assert_close_list({ 116.18773, 4.851213, 0.29130617 }, { smape_2_loss(f, y, ymask):item(),
            mape_loss(f, y, ymask):item(), mase_loss(insample, 2, f, y, ymask):item() }, 1e-4,
            "generic losses")
        local opt = tide.optim.Adam(m:parameters(), { lr = 0.01 })
        local losses = {}
        for step = 1, 3 do
            opt:zero_grad()
            local loss = smape_2_loss(m(x, mask), y, ymask)
            loss:backward()
            opt:step()
            losses[step] = loss:item()
            assert_finite(losses[step], "smape")
        end
        assert_close_list({ 116.18773, 112.17625, 103.36501 }, losses, 1e-4, "generic train")
    end)

    it("interpretable: shared blocks, forecast and losses match PyTorch; Adam on mase", function()
        local x, mask, y, ymask, insample = nbeats_data()
        local m = interpretable({ input_size = 8, output_size = 4, trend_blocks = 2,
            trend_layers = 2, trend_layer_size = 6, degree_of_polynomial = 2,
            seasonality_blocks = 1, seasonality_layers = 2, seasonality_layer_size = 6,
            num_of_harmonics = 2 })
        -- the repeated trend_block is listed once, its frozen buffers with it: 18 names
        assert.equal(18, init(m))
        assert.equal(12, m.blocks[3].basis_parameters.out_features)
        m:eval()
        local f = m(x, mask)
        assert_close_list({ -0.3911002, -0.46428293, -1.2393742, -0.85084838, 0.052150458,
            0.22672674, -0.41445681, -0.11263543, 0.818771, 1.5072467, 0.99395257, 0.5012545 },
            flat(f), 1e-4, "interpretable forecast")
        assert_close_list({ 131.6866, 3.956069, 0.55747378 }, { smape_2_loss(f, y, ymask):item(),
            mape_loss(f, y, ymask):item(), mase_loss(insample, 2, f, y, ymask):item() }, 1e-4,
            "interpretable losses")
        local opt = tide.optim.Adam(m:parameters(), { lr = 0.01 })
        local losses = {}
        for step = 1, 3 do
            opt:zero_grad()
            local loss = mase_loss(insample, 2, m(x, mask), y, ymask)
            loss:backward()
            opt:step()
            losses[step] = loss:item()
        end
        assert_close_list({ 0.55747378, 0.49347964, 0.43457642 }, losses, 1e-4,
            "interpretable train")
        -- the frozen bases did not move
        assert_close_list({ 0, 0.25, 0.5, 0.75 },
            flat(m.blocks[1].basis_function.forecast_time[2]), 1e-7, "forecast_time row 2")
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. cure-lab/LTSF-Linear models/DLinear.py and models/NLinear.py
---------------------------------------------------------------------------------------------
-- class moving_avg(nn.Module):
local moving_avg = nn.Module:extend("moving_avg")
function moving_avg:init(kernel_size, stride)
    self.kernel_size = kernel_size
    -- self.avg = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=0)
    self.avg = nn.AvgPool1d(kernel_size, stride, 0)
end

function moving_avg:forward(x)
    -- padding on the both ends of time series
    -- front = x[:, 0:1, :].repeat(1, (self.kernel_size - 1) // 2, 1)
    local first = x[{ {}, { 1, 1 }, {} }]
    local front = first["repeat"](first, 1, math.floor((self.kernel_size - 1) / 2), 1)
    -- end = x[:, -1:, :].repeat(1, (self.kernel_size - 1) // 2, 1)   (end: a Lua keyword)
    local last = x[{ {}, { -1, -1 }, {} }]
    local end_ = last["repeat"](last, 1, math.floor((self.kernel_size - 1) / 2), 1)
    -- x = torch.cat([front, x, end], dim=1)
    x = tide.cat({ front, x, end_ }, 2)
    -- x = self.avg(x.permute(0, 2, 1))
    x = self.avg(x:permute(1, 3, 2))
    -- x = x.permute(0, 2, 1)
    x = x:permute(1, 3, 2)
    return x
end

-- class series_decomp(nn.Module):
local series_decomp = nn.Module:extend("series_decomp")
function series_decomp:init(kernel_size)
    -- self.moving_avg = moving_avg(kernel_size, stride=1)
    self.moving_avg = moving_avg(kernel_size, 1)
end

function series_decomp:forward(x)
    local moving_mean = self.moving_avg(x)
    local res = x - moving_mean
    return res, moving_mean
end

-- DLinear.py: class Model(nn.Module):
local DLinear = nn.Module:extend("DLinear")
function DLinear:init(configs)
    self.seq_len = configs.seq_len
    self.pred_len = configs.pred_len
    -- Decompsition Kernel Size
    local kernel_size = 25
    self.decompsition = series_decomp(kernel_size)
    self.individual = configs.individual
    self.channels = configs.enc_in
    if self.individual then
        self.Linear_Seasonal = nn.ModuleList()
        self.Linear_Trend = nn.ModuleList()
        -- for i in range(self.channels):
        for _ = 1, self.channels do
            -- self.Linear_Seasonal.append(nn.Linear(self.seq_len,self.pred_len))
            self.Linear_Seasonal:append(nn.Linear(self.seq_len, self.pred_len))
            self.Linear_Trend:append(nn.Linear(self.seq_len, self.pred_len))
        end
    else
        self.Linear_Seasonal = nn.Linear(self.seq_len, self.pred_len)
        self.Linear_Trend = nn.Linear(self.seq_len, self.pred_len)
    end
end

function DLinear:forward(x)
    -- x: [Batch, Input length, Channel]
    local seasonal_init, trend_init = self.decompsition(x)
    -- seasonal_init, trend_init = seasonal_init.permute(0,2,1), trend_init.permute(0,2,1)
    seasonal_init, trend_init = seasonal_init:permute(1, 3, 2), trend_init:permute(1, 3, 2)
    local seasonal_output, trend_output
    if self.individual then
        -- seasonal_output = torch.zeros([seasonal_init.size(0),seasonal_init.size(1),
        --     self.pred_len],dtype=seasonal_init.dtype).to(seasonal_init.device)
        seasonal_output = tide.zeros({ seasonal_init:size(1), seasonal_init:size(2),
            self.pred_len }, { dtype = seasonal_init.dtype }):to(seasonal_init.device)
        trend_output = tide.zeros({ trend_init:size(1), trend_init:size(2), self.pred_len },
            { dtype = trend_init.dtype }):to(trend_init.device)
        for i = 1, self.channels do
            -- seasonal_output[:,i,:] = self.Linear_Seasonal[i](seasonal_init[:,i,:])
            seasonal_output[{ {}, i, {} }] = self.Linear_Seasonal[i](seasonal_init[{ {}, i, {} }])
            -- trend_output[:,i,:] = self.Linear_Trend[i](trend_init[:,i,:])
            trend_output[{ {}, i, {} }] = self.Linear_Trend[i](trend_init[{ {}, i, {} }])
        end
    else
        seasonal_output = self.Linear_Seasonal(seasonal_init)
        trend_output = self.Linear_Trend(trend_init)
    end
    x = seasonal_output + trend_output
    -- return x.permute(0,2,1) # to [Batch, Output length, Channel]
    return x:permute(1, 3, 2)
end

-- NLinear.py: class Model(nn.Module):
local NLinear = nn.Module:extend("NLinear")
function NLinear:init(configs)
    self.seq_len = configs.seq_len
    self.pred_len = configs.pred_len
    self.channels = configs.enc_in
    self.individual = configs.individual
    if self.individual then
        self.Linear = nn.ModuleList()
        for _ = 1, self.channels do
            self.Linear:append(nn.Linear(self.seq_len, self.pred_len))
        end
    else
        self.Linear = nn.Linear(self.seq_len, self.pred_len)
    end
end

function NLinear:forward(x)
    -- seq_last = x[:,-1:,:].detach()
    local seq_last = x[{ {}, { -1, -1 }, {} }]:detach()
    x = x - seq_last
    if self.individual then
        -- output = torch.zeros([x.size(0),self.pred_len,x.size(2)],dtype=x.dtype).to(x.device)
        local output = tide.zeros({ x:size(1), self.pred_len, x:size(3) }, { dtype = x.dtype })
            :to(x.device)
        for i = 1, self.channels do
            -- output[:,:,i] = self.Linear[i](x[:,:,i])
            output[{ {}, {}, i }] = self.Linear[i](x[{ {}, {}, i }])
        end
        x = output
    else
        -- x = self.Linear(x.permute(0,2,1)).permute(0,2,1)
        x = self.Linear(x:permute(1, 3, 2)):permute(1, 3, 2)
    end
    x = x + seq_last
    return x -- [Batch, Output length, Channel]
end

local function ltsf_data()
    local xv, yv = {}, {}
    for j = 0, 2 * 8 * 3 - 1 do xv[#xv + 1] = math.sin(0.7 * j) + 0.05 * j end
    for j = 0, 2 * 4 * 3 - 1 do yv[#yv + 1] = math.cos(0.4 * j) end
    return tide.tensor(xv):view(2, 8, 3), tide.tensor(yv):view(2, 4, 3)
end

local LTSF = {
    { "DLinear", DLinear, true, 12,
        { 1.3411262, -0.094440721, -1.2902781, -0.25303823, -0.34900734, 0.387523, 1.2184373,
            -0.14842635, -1.0753901, -0.37854135, -0.90934563, 0.72738671, 3.0168805, -0.94940066,
            -3.0534723, -1.9727902, 0.18792868, 2.3081894, 2.9256322, -0.34968096, -3.0903676,
            -2.0170374, -1.0503907, 2.7704113 },
        { 3.3080513, 2.8409164, 2.4237697 } },
    { "DLinear", DLinear, false, 4,
        { -1.7025883, -1.7779436, -1.4470828, 1.7147808, 1.7463007, 1.3870735, -1.6119107,
            -1.5985583, -1.2227778, 1.0009211, 0.94313562, 0.56315994, -1.6726893, -2.2852423,
            -2.9614768, 1.4818382, 2.0890248, 2.7360733, -1.1835842, -1.7654369, -2.3620205,
            0.39129689, 0.92868125, 1.4551812 },
        { 3.6303575, 3.0935106, 2.6082311 } },
    { "NLinear", NLinear, true, 6,
        { 0.039803267, 1.9297814, 1.0107138, 4.3903055, 0.73727149, 0.18017006, -0.21928251,
            1.3088145, 1.178031, 4.1931939, 1.1678599, 0.45345482, 1.401614, 3.9478145, 4.8303814,
            3.7944334, 2.0441716, 1.1940413, 1.3295543, 3.079447, 5.5924273, 3.4808259, 2.7374103,
            0.98442435 },
        { 7.1863704, 6.7888641, 6.4071255 } },
    { "NLinear", NLinear, false, 2,
        { 0.039803267, 0.33624542, 0.6489023, 4.3903055, 3.045177, 1.3763885, -0.21928251,
            0.17598391, 0.6261543, 4.1931939, 2.8064749, 1.0698559, 1.401614, 1.2358996, 1.2276568,
            3.7944334, 5.3850641, 6.1159277, 1.3295543, 1.0329916, 0.95264769, 3.4808259, 5.1402435,
            5.9165316 },
        { 9.6960573, 9.2655363, 8.8491755 } },
}

describe("cure-lab/LTSF-Linear models/DLinear.py and models/NLinear.py", function()
    it("series_decomp (kernel 25 and 5) matches PyTorch", function()
        local x = ltsf_data()
        local res, mean = series_decomp(25)(x)
        assert.same({ 2, 8, 3 }, mean.shape)
        assert_close_list({ 0.58165824, 0.83650208, 0.89922112, 0.65748811, 0.86485809, 0.88652033,
            0.73331797, 0.89321411, 0.87381941, 0.80914778, 0.92157012, 0.86111861, 0.88497764,
            0.94992614, 0.84841782, 0.9608075, 0.97828215, 0.83571702, 1.0366373, 1.0066382,
            0.82301623, 1.1124672, 1.0349942, 0.81031537, 1.1359739, 1.2899389, 1.6028991,
            1.2168357, 1.3992108, 1.7089419, 1.2976973, 1.5084827, 1.8149849, 1.378559, 1.6177543,
            1.9210278, 1.4594207, 1.7270262, 2.0270708, 1.5402821, 1.8362979, 2.1331139, 1.6211438,
            1.9455696, 2.2391567, 1.7020053, 2.0548415, 2.3451998 }, flat(mean), 1e-5, "trend")
        assert_close_list(flat(x - mean), flat(res), 1e-6, "seasonal")
        local r5, m5 = series_decomp(5)(x)
        assert_close_list({ 0.088326715, 0.39703771, 0.58485979, 0.1816895, 0.48959151, 0.67540348,
            0.47260928, 0.54456764, 0.5250178, 0.44667014, 0.36988854, 0.35430044 },
            { unpack(flat(m5), 1, 12) }, 1e-5, "trend k5")
        assert_close_list({ -0.088326715, 0.29717997, 0.50058991, 0.83151984, 0.045396656,
            -0.7761867, -1.044185, -1.1770203, -0.75628442, 0.020143747, 0.78709805, 1.1838677 },
            { unpack(flat(r5), 1, 12) }, 1e-5, "seasonal k5")
    end)

    for _, case in ipairs(LTSF) do
        local name, Model, individual, nparams, want_out, want_losses = unpack(case)
        it(name .. " individual=" .. tostring(individual) .. ": forward and 2 Adam steps on MSE",
            function()
                local x, y = ltsf_data()
                local m = Model({ seq_len = 8, pred_len = 4, enc_in = 3, individual = individual })
                assert.equal(nparams, init(m))
                m:eval()
                local out = m(x)
                assert.same({ 2, 4, 3 }, out.shape)
                assert_close_list(want_out, flat(out), 1e-4, name .. " out")
                local opt = tide.optim.Adam(m:parameters(), { lr = 0.01 })
                local criterion = nn.MSELoss()
                local losses = {}
                for step = 1, 3 do
                    opt:zero_grad()
                    local loss = criterion(m(x), y)
                    loss:backward()
                    opt:step()
                    losses[step] = loss:item()
                end
                assert_close_list(want_losses, losses, 1e-4, name .. " train")
            end)
    end
end)
