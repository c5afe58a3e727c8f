-- ported_scripts171_spec.lua — yuezhihan/ts2vec: models/losses.py (hierarchical_contrastive_loss,
-- instance_contrastive_loss, temporal_contrastive_loss), models/encoder.py
-- (generate_continuous_mask, generate_binomial_mask, TSEncoder), models/dilated_conv.py
-- (SamePadConv, ConvBlock, DilatedConvEncoder), utils.py (take_per_row, torch_pad_nan) and
-- ts2vec.py's training step (two crops, AdamW), ported line for line at tiny sizes (batch 3,
-- length 8, input dims 2, hidden 8, output 6, depth 2). The Python line stands above each Lua
-- line that differs from it. Dims and indices are 1-based. The masks' np.random draws are
-- replaced by fixed formulas (the same in the PyTorch reference), the weights and inputs are
-- formulas, and the encoder runs in eval mode (repr_dropout off) with its mask named.
-- PyTorch 1.13's values come from the same code pasted into a script (not kept).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local close = ported.close

---------------------------------------------------------------------------------------------
-- models/losses.py
---------------------------------------------------------------------------------------------
local instance_contrastive_loss, temporal_contrastive_loss

-- def hierarchical_contrastive_loss(z1, z2, alpha=0.5, temporal_unit=0):
local function hierarchical_contrastive_loss(z1, z2, alpha, temporal_unit)
    alpha, temporal_unit = alpha or 0.5, temporal_unit or 0
    -- loss = torch.tensor(0., device=z1.device)
    local loss = tide.tensor(0.0, { device = z1.device })
    local d = 0
    while z1:size(2) > 1 do
        if alpha ~= 0 then
            -- loss += alpha * instance_contrastive_loss(z1, z2)
            loss = loss + alpha * instance_contrastive_loss(z1, z2)
        end
        if d >= temporal_unit then
            if 1 - alpha ~= 0 then
                loss = loss + (1 - alpha) * temporal_contrastive_loss(z1, z2)
            end
        end
        d = d + 1
        -- z1 = F.max_pool1d(z1.transpose(1, 2), kernel_size=2).transpose(1, 2)
        z1 = F.max_pool1d(z1:transpose(2, 3), 2):transpose(2, 3)
        z2 = F.max_pool1d(z2:transpose(2, 3), 2):transpose(2, 3)
    end
    if z1:size(2) == 1 then
        if alpha ~= 0 then
            loss = loss + alpha * instance_contrastive_loss(z1, z2)
        end
        d = d + 1
    end
    return loss / d
end

-- def instance_contrastive_loss(z1, z2):
function instance_contrastive_loss(z1, z2)
    -- B, T = z1.size(0), z1.size(1)
    local B = z1:size(1)
    if B == 1 then
        return z1:new_tensor(0.0)
    end
    -- z = torch.cat([z1, z2], dim=0)  # 2B x T x C
    local z = tide.cat({ z1, z2 }, 1)
    -- z = z.transpose(0, 1)  # T x 2B x C
    z = z:transpose(1, 2)
    -- sim = torch.matmul(z, z.transpose(1, 2))  # T x 2B x 2B
    local sim = tide.matmul(z, z:transpose(2, 3))
    -- logits = torch.tril(sim, diagonal=-1)[:, :, :-1]    # T x 2B x (2B-1)
    local logits = tide.tril(sim, -1)[{ {}, {}, { 1, -2 } }]
    -- logits += torch.triu(sim, diagonal=1)[:, :, 1:]
    logits = logits + tide.triu(sim, 1)[{ {}, {}, { 2, -1 } }]
    -- logits = -F.log_softmax(logits, dim=-1)
    logits = -F.log_softmax(logits, -1)
    -- i = torch.arange(B, device=z1.device)
    local i = tide.arange(1, B + 1, { device = z1.device }) -- 1-based: row i, column B + i - 1
    -- loss = (logits[:, i, B + i - 1].mean() + logits[:, B + i, i].mean()) / 2
    return (logits[{ {}, i, B + i - 1 }]:mean() + logits[{ {}, B + i, i }]:mean()) / 2
end

-- def temporal_contrastive_loss(z1, z2):
function temporal_contrastive_loss(z1, z2)
    local T = z1:size(2)
    if T == 1 then
        return z1:new_tensor(0.0)
    end
    -- z = torch.cat([z1, z2], dim=1)  # B x 2T x C
    local z = tide.cat({ z1, z2 }, 2)
    local sim = tide.matmul(z, z:transpose(2, 3))
    local logits = tide.tril(sim, -1)[{ {}, {}, { 1, -2 } }]
    logits = logits + tide.triu(sim, 1)[{ {}, {}, { 2, -1 } }]
    logits = -F.log_softmax(logits, -1)
    -- t = torch.arange(T, device=z1.device)
    local t = tide.arange(1, T + 1, { device = z1.device })
    -- loss = (logits[:, t, T + t - 1].mean() + logits[:, T + t, t].mean()) / 2
    return (logits[{ {}, t, T + t - 1 }]:mean() + logits[{ {}, T + t, t }]:mean()) / 2
end

---------------------------------------------------------------------------------------------
-- models/encoder.py: the masks (fixed formulas in place of np.random)
---------------------------------------------------------------------------------------------
-- def generate_continuous_mask(B, T, n=5, l=0.1):
local function generate_continuous_mask(B, T, n, l)
    n, l = n or 5, l or 0.1
    -- res = torch.full((B, T), True, dtype=torch.bool)
    local res = tide.full({ B, T }, true, { dtype = "bool" })
    -- if isinstance(n, float):   (Lua 5.1 has no integer type: a fraction stands for a float)
    if n % 1 ~= 0 then
        n = math.floor(n * T)
    end
    -- n = max(min(n, T // 2), 1)
    n = math.max(math.min(n, math.floor(T / 2)), 1)
    if l % 1 ~= 0 then
        l = math.floor(l * T)
    end
    l = math.max(l, 1)
    for i = 0, B - 1 do
        for k = 0, n - 1 do
            -- t = np.random.randint(T-l+1)   (fixed: the same formula in the reference)
            local t = (3 * i + 5 * k) % (T - l + 1)
            -- res[i, t:t+l] = False
            res[{ i + 1, { t + 1, t + l } }] = false
        end
    end
    return res
end

-- def generate_binomial_mask(B, T, p=0.5):
local function generate_binomial_mask(B, T)
    -- return torch.from_numpy(np.random.binomial(1, p, size=(B, T))).to(torch.bool)
    -- (fixed: ((i * T + t) * 7) % 3 != 0, the same in the reference)
    local rows = {}
    for i = 0, B - 1 do
        rows[i + 1] = {}
        for t = 0, T - 1 do
            rows[i + 1][t + 1] = ((i * T + t) * 7) % 3 ~= 0
        end
    end
    return tide.tensor(rows)
end

---------------------------------------------------------------------------------------------
-- models/dilated_conv.py
---------------------------------------------------------------------------------------------
-- class SamePadConv(nn.Module):
local SamePadConv = nn.Module:extend("SamePadConv")
-- def __init__(self, in_channels, out_channels, kernel_size, dilation=1, groups=1):
function SamePadConv:init(in_channels, out_channels, kernel_size, dilation, groups)
    dilation, groups = dilation or 1, groups or 1
    self.receptive_field = (kernel_size - 1) * dilation + 1
    -- padding = self.receptive_field // 2
    local padding = math.floor(self.receptive_field / 2)
    -- self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=padding, ...)
    self.conv = nn.Conv1d(in_channels, out_channels, kernel_size,
        { padding = padding, dilation = dilation, groups = groups })
    -- self.remove = 1 if self.receptive_field % 2 == 0 else 0
    self.remove = self.receptive_field % 2 == 0 and 1 or 0
end
function SamePadConv:forward(x)
    local out = self.conv(x)
    if self.remove > 0 then
        -- out = out[:, :, : -self.remove]
        out = out[{ {}, {}, { 1, -1 - self.remove } }]
    end
    return out
end

-- class ConvBlock(nn.Module):
local ConvBlock = nn.Module:extend("ConvBlock")
-- def __init__(self, in_channels, out_channels, kernel_size, dilation, final=False):
function ConvBlock:init(in_channels, out_channels, kernel_size, dilation, final)
    -- self.conv1 = SamePadConv(in_channels, out_channels, kernel_size, dilation=dilation)
    self.conv1 = SamePadConv(in_channels, out_channels, kernel_size, dilation)
    self.conv2 = SamePadConv(out_channels, out_channels, kernel_size, dilation)
    -- self.projector = nn.Conv1d(in_channels, out_channels, 1)
    --     if in_channels != out_channels or final else None
    self.projector = (in_channels ~= out_channels or final)
        and nn.Conv1d(in_channels, out_channels, 1) or nil
end
function ConvBlock:forward(x)
    -- residual = x if self.projector is None else self.projector(x)
    local residual = self.projector == nil and x or self.projector(x)
    x = F.gelu(x)
    x = self.conv1(x)
    x = F.gelu(x)
    x = self.conv2(x)
    return x + residual
end

-- class DilatedConvEncoder(nn.Module):
local DilatedConvEncoder = nn.Module:extend("DilatedConvEncoder")
function DilatedConvEncoder:init(in_channels, channels, kernel_size)
    -- self.net = nn.Sequential(*[ConvBlock(channels[i-1] if i > 0 else in_channels, channels[i],
    --     kernel_size=kernel_size, dilation=2**i, final=(i == len(channels)-1))
    --     for i in range(len(channels))])
    local blocks = {}
    for i = 1, #channels do
        blocks[i] = ConvBlock(i > 1 and channels[i - 1] or in_channels, channels[i],
            kernel_size, math.floor(2 ^ (i - 1)), i == #channels)
    end
    self.net = nn.Sequential(unpack(blocks))
end
function DilatedConvEncoder:forward(x)
    return self.net(x)
end

---------------------------------------------------------------------------------------------
-- models/encoder.py: TSEncoder
---------------------------------------------------------------------------------------------
-- class TSEncoder(nn.Module):
local TSEncoder = nn.Module:extend("TSEncoder")
-- def __init__(self, input_dims, output_dims, hidden_dims=64, depth=10, mask_mode='binomial'):
function TSEncoder:init(input_dims, output_dims, hidden_dims, depth, mask_mode)
    hidden_dims, depth, mask_mode = hidden_dims or 64, depth or 10, mask_mode or "binomial"
    self.input_dims = input_dims
    self.output_dims = output_dims
    self.hidden_dims = hidden_dims
    self.mask_mode = mask_mode
    self.input_fc = nn.Linear(input_dims, hidden_dims)
    -- [hidden_dims] * depth + [output_dims]
    local channels = {}
    for i = 1, depth do channels[i] = hidden_dims end
    channels[depth + 1] = output_dims
    self.feature_extractor = DilatedConvEncoder(hidden_dims, channels, 3)
    -- self.repr_dropout = nn.Dropout(p=0.1)
    self.repr_dropout = nn.Dropout(0.1)
end

-- def forward(self, x, mask=None):  # x: B x T x input_dims
function TSEncoder:forward(x, mask)
    -- nan_mask = ~x.isnan().any(axis=-1)
    local nan_mask = x:isnan():any(-1):logical_not()
    -- x[~nan_mask] = 0
    x[nan_mask:logical_not()] = 0
    x = self.input_fc(x) -- B x T x Ch
    if mask == nil then
        if self.training then
            mask = self.mask_mode
        else
            mask = "all_true"
        end
    end
    if mask == "binomial" then
        -- mask = generate_binomial_mask(x.size(0), x.size(1)).to(x.device)
        mask = generate_binomial_mask(x:size(1), x:size(2)):to(x.device)
    elseif mask == "continuous" then
        mask = generate_continuous_mask(x:size(1), x:size(2)):to(x.device)
    elseif mask == "all_true" then
        -- mask = x.new_full((x.size(0), x.size(1)), True, dtype=torch.bool)
        mask = x:new_full({ x:size(1), x:size(2) }, true, { dtype = "bool" })
    elseif mask == "all_false" then
        mask = x:new_full({ x:size(1), x:size(2) }, false, { dtype = "bool" })
    elseif mask == "mask_last" then
        mask = x:new_full({ x:size(1), x:size(2) }, true, { dtype = "bool" })
        -- mask[:, -1] = False
        mask[{ {}, -1 }] = false
    end
    -- mask &= nan_mask
    mask:logical_and_(nan_mask)
    -- x[~mask] = 0
    x[mask:logical_not()] = 0
    -- x = x.transpose(1, 2)  # B x Ch x T
    x = x:transpose(2, 3)
    x = self.repr_dropout(self.feature_extractor(x)) -- B x Co x T
    x = x:transpose(2, 3) -- B x T x Co
    return x
end

---------------------------------------------------------------------------------------------
-- utils.py
---------------------------------------------------------------------------------------------
-- def take_per_row(A, indx, num_elem):
local function take_per_row(A, indx, num_elem)
    -- all_indx = indx[:,None] + np.arange(num_elem)
    local all_indx = indx[{ {}, tide.newaxis }] + tide.arange(0, num_elem)
    -- return A[torch.arange(all_indx.shape[0])[:,None], all_indx]
    return A[{ tide.arange(1, all_indx:size(1) + 1)[{ {}, tide.newaxis }], all_indx }]
end

-- def torch_pad_nan(arr, left=0, right=0, dim=0):
local function torch_pad_nan(arr, left, right, dim)
    left, right, dim = left or 0, right or 0, dim or 1
    if left > 0 then
        -- padshape = list(arr.shape); padshape[dim] = left
        local padshape = arr:size()
        padshape[dim] = left
        -- arr = torch.cat((torch.full(padshape, np.nan), arr), dim=dim)
        arr = tide.cat({ tide.full(padshape, 0 / 0), arr }, dim)
    end
    if right > 0 then
        local padshape = arr:size()
        padshape[dim] = right
        arr = tide.cat({ arr, tide.full(padshape, 0 / 0) }, dim)
    end
    return arr
end

---------------------------------------------------------------------------------------------
-- the fixed data and weights (formulas; the reference uses the same)
---------------------------------------------------------------------------------------------
local B, T, DIN, H, DOUT = 3, 8, 2, 8, 6

local function zfix(b_, t_, c_, s)
    local rows = {}
    for b = 0, b_ - 1 do
        rows[b + 1] = {}
        for t = 0, t_ - 1 do
            local row = {}
            for c = 0, c_ - 1 do row[c + 1] = math.sin(s + 0.9 * b + 0.6 * t + 0.45 * c) end
            rows[b + 1][t + 1] = row
        end
    end
    return tide.tensor(rows)
end

local function fill(p, j)
    local v = {}
    for k = 0, p:numel() - 1 do v[k + 1] = 0.3 * math.sin(0.37 * k + 1.3 * j + 0.5) end
    tide.no_grad(function() p:copy_(tide.tensor(v):view(p:size())) end)
end

local function init(model)
    local ps = { model.input_fc.weight, model.input_fc.bias }
    local net = model.feature_extractor.net
    for i = 1, #net do
        local b = net[i]
        for _, p in ipairs({ b.conv1.conv.weight, b.conv1.conv.bias, b.conv2.conv.weight,
            b.conv2.conv.bias }) do ps[#ps + 1] = p end
        if b.projector ~= nil then
            ps[#ps + 1] = b.projector.weight
            ps[#ps + 1] = b.projector.bias
        end
    end
    for j, p in ipairs(ps) do fill(p, j - 1) end
end

local function make_x()
    local x = zfix(B, T, DIN, 0.3)
    -- x[1, 3, 0] = math.nan
    x[{ 2, 4, 1 }] = 0 / 0
    return x
end

local function assert_near(got, want, tol, what)
    assert(close(got, want, tol), string.format("%s: %.8g, PyTorch %.8g", what, got, want))
end

describe("ported ts2vec (hierarchical contrastive loss, TSEncoder)", function()
    local z1, z2 = zfix(B, 5, DOUT, 0.1), zfix(B, 5, DOUT, 0.7)

    it("instance and temporal contrastive losses match PyTorch", function()
        assert_near(instance_contrastive_loss(z1, z2):item(), 1.0217753648757935, 1e-5, "inst")
        assert_near(temporal_contrastive_loss(z1, z2):item(), 1.6154112815856934, 1e-5, "temp")
        assert.are.equal(0, instance_contrastive_loss(z1[{ { 1, 1 } }], z2[{ { 1, 1 } }]):item())
    end)

    it("hierarchical_contrastive_loss pools over time and matches PyTorch", function()
        assert_near(hierarchical_contrastive_loss(z1, z2):item(), 0.9199798703193665, 1e-5,
            "hier")
        assert_near(hierarchical_contrastive_loss(z1, z2, 0.3, 1):item(), 0.46407127380371094,
            1e-5, "hier alpha 0.3 temporal_unit 1")
    end)

    it("take_per_row and torch_pad_nan", function()
        local x = make_x()
        -- take_per_row(x, torch.tensor([0, 2, 1]), 4)[..., 0]  (1-based starts)
        local got = take_per_row(x, tide.tensor({ 1, 3, 2 }), 4)
        assert.are.same({ 3, 4, 2 }, got:size())
        local want = { { 0.29552021622657776, 0.7833269238471985, 0.9974949955940247,
            0.8632093667984009 }, { 0.6754631996154785, 0 / 0, -0.4425204396247864,
            -0.8715757727622986 }, { 0.42737987637519836, -0.15774568915367126,
            -0.6877661347389221, -0.9775301218032837 } }
        local g = got[{ "...", 1 }]:totable()
        for i = 1, 3 do
            for j = 1, 4 do
                local w = want[i][j]
                if w ~= w then
                    assert.is_true(g[i][j] ~= g[i][j])
                else
                    assert_near(g[i][j], w, 1e-6, "take_per_row")
                end
            end
        end
        local p = torch_pad_nan(tide.tensor({ 1.0, 2.0 }), 2, 1):totable()
        assert.are.equal(5, #p)
        assert.is_true(p[1] ~= p[1] and p[2] ~= p[2] and p[5] ~= p[5])
        assert.are.same({ 1, 2 }, { p[3], p[4] })
    end)

    it("SamePadConv removes the extra step of an even receptive field", function()
        local sp = SamePadConv(2, 3, 2)
        assert.are.equal(1, sp.remove)
        fill(sp.conv.weight, 0)
        fill(sp.conv.bias, 1)
        local out = sp(make_x():nan_to_num():transpose(2, 3))
        assert.are.same({ 3, 3, 8 }, out:size())
        assert_near(out:sum():item(), 16.70547866821289, 1e-5, "samepad")
    end)

    it("TSEncoder's output with each mask mode matches PyTorch", function()
        local model = TSEncoder(DIN, DOUT, H, 2)
        init(model)
        model:eval()
        local want = {
            binomial = { 12.948091506958008, 32.3631477355957 },
            continuous = { 13.432478904724121, 30.868192672729492 },
            all_true = { 11.12820053100586, 33.636802673339844 },
            all_false = { 12.382112503051758, 29.45642852783203 },
            mask_last = { 12.289318084716797, 32.935115814208984 },
        }
        local row = { 0.15432968735694885, -0.32509976625442505, 0.011545240879058838,
            0.19015896320343018, -0.11898605525493622, 0.6544712781906128 }
        for _, mode in ipairs({ "binomial", "continuous", "all_true", "all_false", "mask_last" }) do
            local out = model(make_x(), mode)
            assert.are.same({ B, T, DOUT }, out:size())
            assert_near(out:sum():item(), want[mode][1], 1e-4, mode .. " sum")
            assert_near((out * out):sum():item(), want[mode][2], 1e-4, mode .. " sum of squares")
        end
        ported.assert_close_list(row, model(make_x(), "binomial")[{ 2, 3 }]:totable(), 1e-4,
            "binomial out[1, 2]")
        -- eval with no mask is all_true
        assert_near(model(make_x()):sum():item(), want.all_true[1], 1e-4, "default mask")
    end)

    it("two AdamW steps on two crops match PyTorch's losses", function()
        local model = TSEncoder(DIN, DOUT, H, 2)
        init(model)
        model:eval() -- repr_dropout off; the masks are named below
        local x = make_x()
        -- optimizer = torch.optim.AdamW(self._net.parameters(), lr=self.lr)
        local optimizer = optim.AdamW(model:parameters(), { lr = 0.01 })
        -- crop_l = np.random.randint(...) etc. (fixed)
        local crop_l, crop_left, crop_eleft, crop_eright = 5, 2, 1, 8
        local crop_right = crop_left + crop_l
        -- crop_offset = np.random.randint(low=-crop_eleft, high=..., size=x.size(0))
        local crop_offset = tide.tensor({ 0, -1, 0 })
        local losses = {}
        for _ = 1, 2 do
            optimizer:zero_grad()
            -- out1 = self._net(take_per_row(x, crop_offset + crop_eleft, crop_right - crop_eleft))
            -- (+ 1: take_per_row's starts are 1-based)
            local out1 = model(take_per_row(x, crop_offset + crop_eleft + 1,
                crop_right - crop_eleft), "binomial")
            -- out1 = out1[:, -crop_l:]
            out1 = out1[{ {}, { -crop_l, -1 } }]
            local out2 = model(take_per_row(x, crop_offset + crop_left + 1,
                crop_eright - crop_left), "continuous")
            -- out2 = out2[:, :crop_l]
            out2 = out2[{ {}, { 1, crop_l } }]
            local loss = hierarchical_contrastive_loss(out1, out2, nil, 0)
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
            assert_finite(losses[#losses], "loss")
        end
        ported.assert_close_list({ 1.2040146589279175, 1.139957308769226 }, losses, 1e-4,
            "losses")
        assert.is_true(losses[2] < losses[1])
    end)
end)
