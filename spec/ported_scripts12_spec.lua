-- ported_scripts12_spec.lua — two well-known from-scratch scripts ported line for line: LoRA
-- from scratch (Raschka's "Code LoRA from Scratch" article and LLMs-from-scratch appendix E:
-- LoRALayer, LinearWithLoRA, LinearWithLoRAMerged, replace_linear_with_lora, freezing and
-- counting trainable parameters) and a minimal DDPM (the common "diffusion from scratch"
-- notebooks: the Annotated Diffusion / DeepFindr schedule, extract / get_index_from_list,
-- q_sample, SinusoidalPositionEmbeddings, a tiny Conv2d + GroupNorm + SiLU denoiser with the
-- time embedding added as h + time_emb[(..., ) + (None, ) * 2], p_losses and the p_sample loop).
-- Both were written from knowledge of those scripts (no source fetched), shrunk to tiny sizes and
-- random data. The Python line stands above each Lua line that differs from it. Timesteps index
-- 1-based in tide's gather, so `t` runs over 1..T where the Python's runs over 0..T-1.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local unpack = table.unpack or unpack -- luacheck: ignore

local function assert_finite(x, what)
    assert(x == x and x ~= math.huge and x ~= -math.huge, (what or "value") .. " is not finite: " .. tostring(x))
end

local function close(a, b, tol)
    return math.abs(a - b) <= (tol or 1e-5) * math.max(1, math.abs(b))
end

-- Python's isinstance(m, cls)
local isinstance = tide.isinstance

---------------------------------------------------------------------------------------------
-- 1. LoRA from scratch
---------------------------------------------------------------------------------------------
describe("LoRA from scratch (Raschka)", function()
    -- class LoRALayer(torch.nn.Module):
    local LoRALayer = nn.Module:extend("LoRALayer")
    -- def __init__(self, in_dim, out_dim, rank, alpha):
    function LoRALayer:init(in_dim, out_dim, rank, alpha)
        -- self.A = torch.nn.Parameter(torch.empty(in_dim, rank))
        self.A = nn.Parameter(tide.empty(in_dim, rank))
        -- torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))  # similar to standard weight initialization
        nn.init.kaiming_uniform_(self.A, { a = math.sqrt(5) })
        -- self.B = torch.nn.Parameter(torch.zeros(rank, out_dim))
        self.B = nn.Parameter(tide.zeros(rank, out_dim))
        self.alpha = alpha
    end

    function LoRALayer:forward(x)
        -- x = self.alpha * (x @ self.A @ self.B)
        x = self.alpha * (x:matmul(self.A):matmul(self.B))
        return x
    end

    -- class LinearWithLoRA(torch.nn.Module):
    local LinearWithLoRA = nn.Module:extend("LinearWithLoRA")
    function LinearWithLoRA:init(linear, rank, alpha)
        self.linear = linear
        -- self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)
    end

    function LinearWithLoRA:forward(x)
        return self.linear(x) + self.lora(x)
    end

    -- class LinearWithLoRAMerged(torch.nn.Module):
    local LinearWithLoRAMerged = nn.Module:extend("LinearWithLoRAMerged")
    function LinearWithLoRAMerged:init(linear, rank, alpha)
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)
    end

    function LinearWithLoRAMerged:forward(x)
        -- lora = self.lora.A @ self.lora.B # Combine LoRA matrices
        local lora = self.lora.A:matmul(self.lora.B)
        -- combined_weight = self.linear.weight + self.lora.alpha*lora.T
        local combined_weight = self.linear.weight + self.lora.alpha * lora.T
        -- return F.linear(x, combined_weight, self.linear.bias)
        return F.linear(x, combined_weight, self.linear.bias)
    end

    -- def replace_linear_with_lora(model, rank, alpha):
    local function replace_linear_with_lora(model, rank, alpha)
        -- for name, module in model.named_children():
        for name, module in model:named_children() do
            -- if isinstance(module, torch.nn.Linear):
            if isinstance(module, nn.Linear) then
                -- setattr(model, name, LinearWithLoRA(module, rank, alpha))
                model[name] = LinearWithLoRA(module, rank, alpha)
            else
                -- replace_linear_with_lora(module, rank, alpha)
                replace_linear_with_lora(module, rank, alpha)
            end
        end
    end

    -- total_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    local function count_trainable(model)
        local total_params = 0
        for _, p in ipairs(model:parameters()) do
            if p.requires_grad then total_params = total_params + p:numel() end
        end
        return total_params
    end

    it("LoRALayer's kaiming_uniform_(a=sqrt(5)) bound, B zeros, LinearWithLoRA == Merged", function()
        -- torch.manual_seed(123)
        tide.manual_seed(123)
        -- layer = nn.Linear(10, 2)
        local layer = nn.Linear(10, 2)
        -- x = torch.randn((1, 10))
        local x = tide.randn({ 1, 10 })
        local lora = LoRALayer(10, 2, 2, 4)
        -- kaiming_uniform_ on A [10, 2]: fan_in = A.size(1) = rank = 2, bound = 1/sqrt(2)
        local amax = lora.A:abs():max():item()
        assert.is_true(amax <= 1 / math.sqrt(2) + 1e-6)
        assert.is_true(amax > 1 / math.sqrt(10)) -- 20 draws of U(-0.707, 0.707)
        assert.are.equal(0, lora.B:abs():sum():item())
        -- layer_lora_1 = LinearWithLoRA(layer, rank=2, alpha=4)
        local layer_lora_1 = LinearWithLoRA(layer, 2, 4)
        -- B zeros: the wrapped layer gives the plain layer's output
        assert.is_true(tide.allclose(layer_lora_1(x), layer(x)))
        -- layer_lora_2 = LinearWithLoRAMerged(layer, rank=2, alpha=4)
        local layer_lora_2 = LinearWithLoRAMerged(layer, 2, 4)
        -- with nonzero A and B the two forms agree
        tide.no_grad(function()
            layer_lora_1.lora.B:normal_()
            layer_lora_2.lora.A:copy_(layer_lora_1.lora.A)
            layer_lora_2.lora.B:copy_(layer_lora_1.lora.B)
        end)
        local y1, y2 = layer_lora_1(x), layer_lora_2(x)
        assert.are.same({ 1, 2 }, y2.shape)
        assert.is_true(tide.allclose(y1, y2, { atol = 1e-5 }))
        assert.is_false(tide.allclose(y1, layer(x), { atol = 1e-3 }))
        -- fixed values against PyTorch 1.13:
        -- W = arange(6).view(2,3)/10, b = [0.5,-0.5], A = arange(6).view(3,2)/4 - .5, B = [[1,-1],[2,0.5]]
        -- x = [[1., 2., -1.]] -> LinearWithLoRA(alpha=4) gives [[-7.5, 3.1]]
        local lin = nn.Linear(3, 2)
        local m1 = LinearWithLoRA(lin, 2, 4)
        local m2 = LinearWithLoRAMerged(lin, 2, 4)
        tide.no_grad(function()
            lin.weight:copy_(tide.arange(6):view(2, 3) / 10)
            lin.bias:copy_(tide.tensor({ 0.5, -0.5 }))
            m1.lora.A:copy_(tide.arange(6):view(3, 2) / 4 - 0.5)
            m1.lora.B:copy_(tide.tensor({ { 1, -1 }, { 2, 0.5 } }))
            m2.lora.A:copy_(m1.lora.A)
            m2.lora.B:copy_(m1.lora.B)
        end)
        local xv = tide.tensor({ { 1., 2., -1. } }, { dtype = tide.float32 }) -- float on Lua 5.1 too
        local want = tide.tensor({ { -7.5, 3.1 } })
        assert.is_true(tide.allclose(m1(xv), want, { atol = 1e-5 }))
        assert.is_true(tide.allclose(m2(xv), want, { atol = 1e-5 }))
    end)

    it("MultilayerPerceptron: layers[0] = LinearWithLoRA(...), freeze_linear_layers, train, only A/B move", function()
        tide.manual_seed(123)
        local num_features, num_hidden_1, num_hidden_2, num_classes = 12, 16, 8, 3
        -- class MultilayerPerceptron(nn.Module):
        local MultilayerPerceptron = nn.Module:extend("MultilayerPerceptron")
        function MultilayerPerceptron:init(num_features_, num_hidden_1_, num_hidden_2_, num_classes_)
            -- self.layers = nn.Sequential(
            --     nn.Linear(num_features, num_hidden_1), nn.ReLU(),
            --     nn.Linear(num_hidden_1, num_hidden_2), nn.ReLU(),
            --     nn.Linear(num_hidden_2, num_classes))
            self.layers = nn.Sequential(
                nn.Linear(num_features_, num_hidden_1_), nn.ReLU(),
                nn.Linear(num_hidden_1_, num_hidden_2_), nn.ReLU(),
                nn.Linear(num_hidden_2_, num_classes_))
        end

        function MultilayerPerceptron:forward(x)
            x = self.layers(x)
            return x
        end

        local model = MultilayerPerceptron(num_features, num_hidden_1, num_hidden_2, num_classes)
        -- model_lora = copy.deepcopy(model)
        local model_lora = tide.deepcopy(model)
        -- model_lora.layers[0] = LinearWithLoRAMerged(model_lora.layers[0], rank=4, alpha=8)
        model_lora.layers[1] = LinearWithLoRAMerged(model_lora.layers[1], 4, 8)
        -- model_lora.layers[2] = LinearWithLoRAMerged(model_lora.layers[2], rank=4, alpha=8)
        model_lora.layers[3] = LinearWithLoRAMerged(model_lora.layers[3], 4, 8)
        -- model_lora.layers[4] = LinearWithLoRAMerged(model_lora.layers[4], rank=4, alpha=8)
        model_lora.layers[5] = LinearWithLoRAMerged(model_lora.layers[5], 4, 8)
        assert.is_true(isinstance(model_lora.layers[1], LinearWithLoRAMerged))

        -- def freeze_linear_layers(model):
        local function freeze_linear_layers(m)
            -- for child in model.children():
            for _, child in ipairs(m:children()) do
                if isinstance(child, nn.Linear) then
                    -- for param in child.parameters(): param.requires_grad = False
                    for _, param in ipairs(child:parameters()) do
                        param.requires_grad = false
                    end
                else
                    -- Recursively freeze linear layers in children modules
                    freeze_linear_layers(child)
                end
            end
        end
        freeze_linear_layers(model_lora)
        -- for name, param in model_lora.named_parameters(): print(f"{name}: {param.requires_grad}")
        local flags = {}
        for name, param in model_lora:named_parameters() do
            flags[name] = param.requires_grad
        end
        assert.is_false(flags["layers.1.linear.weight"])
        assert.is_false(flags["layers.1.linear.bias"])
        assert.is_true(flags["layers.1.lora.A"])
        assert.is_true(flags["layers.5.lora.B"])
        -- 4 * (12 + 16) + 4 * (16 + 8) + 4 * (8 + 3) = 252
        assert.are.equal(252, count_trainable(model_lora))

        -- the same outputs as the original model before training (B is zeros)
        local features = tide.randn(16, num_features)
        local targets = tide.randint(1, num_classes + 1, { 16 })
        assert.is_true(tide.allclose(model_lora(features), model(features), { atol = 1e-6 }))

        -- optimizer_lora = torch.optim.Adam(model_lora.parameters(), lr=learning_rate)
        local optimizer_lora = tide.optim.Adam(model_lora:parameters(), { lr = 0.01 })
        local w_before = model_lora.layers[1].linear.weight:clone()
        local A_before = model_lora.layers[1].lora.A:clone()
        local losses = {}
        for _ = 1, 8 do
            -- logits = model(features)
            local logits = model_lora(features)
            -- loss = F.cross_entropy(logits, targets)
            local loss = F.cross_entropy(logits, targets)
            optimizer_lora:zero_grad()
            loss:backward()
            optimizer_lora:step()
            losses[#losses + 1] = loss:item()
            assert_finite(loss:item(), "loss")
        end
        assert.is_true(losses[#losses] < losses[1])
        assert.is_true(tide.equal(model_lora.layers[1].linear.weight, w_before))
        assert.is_nil(model_lora.layers[1].linear.weight.grad)
        assert.is_false(tide.equal(model_lora.layers[1].lora.A, A_before))
        assert.is_true(model_lora.layers[1].lora.B:abs():sum():item() > 0)
    end)

    it("replace_linear_with_lora over an nn.Sequential with nested Sequentials; freeze, train", function()
        tide.manual_seed(0)
        -- model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(),
        --     nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Sequential(nn.Linear(16, 8), nn.Tanh())),
        --     nn.Linear(8, 1))
        local model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(),
            nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Sequential(nn.Linear(16, 8), nn.Tanh())),
            nn.Linear(8, 1))
        -- total_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
        -- 8*16+16 + 16*16+16 + 16*8+8 + 8+1 = 561
        assert.are.equal(561, count_trainable(model))
        -- for param in model.parameters(): param.requires_grad = False
        for _, param in ipairs(model:parameters()) do
            param.requires_grad = false
        end
        assert.are.equal(0, count_trainable(model))
        -- replace_linear_with_lora(model, rank=2, alpha=4)
        replace_linear_with_lora(model, 2, 4)
        -- print(model)
        local printed = tostring(model)
        assert.is_truthy(printed:find("1: LinearWithLoRA", 1, true))
        -- model[name] = m (setattr) replaced the child that forward runs and parameters() lists:
        -- seq[i] reads it once a walk of the children (print, parameters, forward) has run
        assert.is_true(isinstance(model[1], LinearWithLoRA))
        assert.is_true(isinstance(model[3][1], LinearWithLoRA))
        assert.is_true(isinstance(model[3][3][1], LinearWithLoRA))
        assert.is_true(isinstance(model[4], LinearWithLoRA))
        assert.is_true(isinstance(model[3][3][2], nn.Tanh))
        -- print(model): the children keep their names
        local names = {}
        for name, _ in model:named_parameters() do names[#names + 1] = name end
        assert.are.same({
            "1.linear.weight", "1.linear.bias", "1.lora.A", "1.lora.B",
            "3.1.linear.weight", "3.1.linear.bias", "3.1.lora.A", "3.1.lora.B",
            "3.3.1.linear.weight", "3.3.1.linear.bias", "3.3.1.lora.A", "3.3.1.lora.B",
            "4.linear.weight", "4.linear.bias", "4.lora.A", "4.lora.B",
        }, names)
        -- 2*(8+16) + 2*(16+16) + 2*(16+8) + 2*(8+1) = 178
        assert.are.equal(178, count_trainable(model))

        local X, y = tide.randn(32, 8), tide.randn(32, 1)
        -- optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05)
        local trainable = {}
        for _, p in ipairs(model:parameters()) do
            if p.requires_grad then trainable[#trainable + 1] = p end
        end
        local optimizer = tide.optim.SGD(trainable, { lr = 0.05 })
        local before = {}
        for name, p in model:named_parameters() do before[name] = p:clone() end
        local losses = {}
        for _ = 1, 6 do
            optimizer:zero_grad()
            local loss = F.mse_loss(model(X), y)
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
        end
        assert_finite(losses[#losses], "loss")
        assert.is_true(losses[#losses] < losses[1])
        -- only A/B changed
        for name, p in model:named_parameters() do
            local moved = not tide.equal(p, before[name])
            if name:find("lora", 1, true) then
                assert.is_true(moved, name)
            else
                assert.is_false(moved, name)
            end
        end
    end)
end)

describe("list modules: s[i] = m and s[name] = m replace the layer everywhere", function()
    it("Sequential: seq[0] = m (s[1] = m) is the layer forward runs and parameters() lists", function()
        tide.manual_seed(0)
        local s = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
        local new = nn.Linear(2, 4)
        -- model.layers[0] = LinearWithLoRA(model.layers[0], ...): PyTorch's Sequential.__setitem__
        s[1] = new
        assert.are.equal(new, s[1])
        assert.are.same({ 1, 4 }, s(tide.randn(1, 2)).shape)
        local params = s:parameters()
        assert.are.equal(2, #params)
        assert.are.equal(new.weight, params[1])
        assert.are.equal(new, s:get_submodule("1"))
        assert.are.same({ "1.bias", "1.weight" }, (function()
            local r = {}
            for name in pairs(s:state_dict()) do r[#r + 1] = name end
            table.sort(r)
            return r
        end)())
        assert.is_truthy(tostring(s):find("Linear(in_features=2, out_features=4, bias=true)", 1,
            true))
    end)

    it("Sequential: setattr(seq, name, m) (s[\"1\"] = m, s.conv = m) is the layer forward runs", function()
        local s = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
        s["1"] = nn.Linear(2, 5)
        assert.are.same({ 1, 5 }, s(tide.randn(1, 2)).shape)
        assert.are.equal(5, s[1].out_features)
        local named = nn.Sequential({ { "fc", nn.Linear(2, 3) }, { "act", nn.Tanh() } })
        named.fc = nn.Linear(2, 6)
        assert.are.same({ 1, 6 }, named(tide.randn(1, 2)).shape)
        assert.are.equal(named.fc, named[1])
        -- removing a named child (s.act = nil) still renumbers
        named.act = nil
        assert.are.equal(1, #named:children())
        named:forward(tide.randn(1, 2))
        assert.are.equal(1, #named)
        -- append/insert/pop keep working after replacements
        s[2] = nn.Tanh()
        s:insert(1, nn.Identity())
        assert.is_true(isinstance(s[3], nn.Tanh))
        s:pop(1)
        assert.are.same({ 1, 5 }, s(tide.randn(1, 2)).shape)
    end)

    it("ModuleList: ml[i] = m and ml[\"i\"] = m both replace module i", function()
        local ml = nn.ModuleList({ nn.Linear(2, 2), nn.ReLU() })
        ml[1] = nn.Tanh()
        assert.are.equal(0, #ml:parameters())
        ml["2"] = nn.Linear(2, 7)
        assert.are.equal(2, #ml:parameters())
        assert.are.equal(7, ml[2].out_features)
        local seen = {}
        for i, m in ipairs(ml) do seen[i] = m.__name end
        assert.are.same({ "Tanh", "Linear" }, seen)
    end)

    it("a value that is not a Module raises naming the form and puts the layer back", function()
        local s = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
        local old = s[2]
        s[2] = 5
        assert.has_error(function() s:parameters() end,
            "tide: Sequential: s[2] = v with v a number: a layer must be a Module (the layer is " ..
            "put back; remove one with s:pop(2))")
        assert.are.equal(old, s[2])
        assert.are.equal(old, s["2"])
        assert.are.same({ 1, 3 }, s(tide.randn(1, 2)).shape)
        local ml = nn.ModuleList({ nn.Linear(2, 2) })
        ml[1] = "x"
        local ok, err = pcall(function() return ml:children() end)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("ModuleList: s[1] = v with v a string", 1, true))
        assert.is_true(isinstance(ml[1], nn.Linear))
        -- both forms at once, to different modules
        s[1] = nn.Tanh()
        s["1"] = nn.Sigmoid()
        assert.has_error(function() s:forward(tide.randn(1, 2)) end,
            "tide: Sequential: layer 1 was set twice, as s[1] and as s[\"1\"], to different " ..
            "modules; set one of them (the layer is put back)")
        assert.is_true(isinstance(s[1], nn.Linear))
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. a minimal DDPM (diffusion from scratch)
---------------------------------------------------------------------------------------------
describe("DDPM from scratch", function()
    -- def linear_beta_schedule(timesteps):
    local function linear_beta_schedule(timesteps)
        local beta_start = 0.0001
        local beta_end = 0.02
        -- return torch.linspace(beta_start, beta_end, timesteps)
        return tide.linspace(beta_start, beta_end, timesteps)
    end

    -- def cosine_beta_schedule(timesteps, s=0.008):
    local function cosine_beta_schedule(timesteps, s)
        s = s or 0.008
        local steps = timesteps + 1
        local x = tide.linspace(0, timesteps, steps)
        -- alphas_cumprod = torch.cos(((x / timesteps) + s) / (1 + s) * torch.pi * 0.5) ** 2
        local alphas_cumprod = tide.cos(((x / timesteps) + s) / (1 + s) * math.pi * 0.5) ^ 2
        -- alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
        alphas_cumprod = alphas_cumprod / alphas_cumprod[1]
        -- betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
        -- (x[1:] is x[{{2, -1}}]: a tensor's x[{{2}}] is the one-element range 2..2)
        local betas = 1 - (alphas_cumprod[{ { 2, -1 } }] / alphas_cumprod[{ { 1, -2 } }])
        -- return torch.clip(betas, 0.0001, 0.9999)
        return tide.clip(betas, 0.0001, 0.9999)
    end

    local timesteps = 20
    -- betas = linear_beta_schedule(timesteps=timesteps)
    local betas = linear_beta_schedule(timesteps)
    -- alphas = 1. - betas
    local alphas = 1. - betas
    -- alphas_cumprod = torch.cumprod(alphas, axis=0)
    local alphas_cumprod = tide.cumprod(alphas, { axis = 1 })
    -- alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
    local alphas_cumprod_prev = F.pad(alphas_cumprod[{ { 1, -2 } }], { 1, 0 }, { value = 1.0 })
    -- sqrt_recip_alphas = torch.sqrt(1.0 / alphas)
    local sqrt_recip_alphas = tide.sqrt(1.0 / alphas)
    -- sqrt_alphas_cumprod = torch.sqrt(alphas_cumprod)
    local sqrt_alphas_cumprod = tide.sqrt(alphas_cumprod)
    -- sqrt_one_minus_alphas_cumprod = torch.sqrt(1. - alphas_cumprod)
    local sqrt_one_minus_alphas_cumprod = tide.sqrt(1. - alphas_cumprod)
    -- posterior_variance = betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)
    local posterior_variance = betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)

    -- def extract(a, t, x_shape):
    local function extract(a, t, x_shape)
        -- batch_size = t.shape[0]
        local batch_size = t.shape[1]
        -- out = a.gather(-1, t.cpu())
        local out = a:gather(-1, t:cpu())
        -- return out.reshape(batch_size, *((1,) * (len(x_shape) - 1))).to(t.device)
        local ones = {}
        for i = 1, #x_shape - 1 do ones[i] = 1 end
        return out:reshape(batch_size, unpack(ones)):to(t.device)
    end

    -- def q_sample(x_start, t, noise=None):
    local function q_sample(x_start, t, noise)
        if noise == nil then
            noise = tide.randn_like(x_start)
        end
        local sqrt_alphas_cumprod_t = extract(sqrt_alphas_cumprod, t, x_start.shape)
        local sqrt_one_minus_alphas_cumprod_t = extract(sqrt_one_minus_alphas_cumprod, t, x_start.shape)
        return sqrt_alphas_cumprod_t * x_start + sqrt_one_minus_alphas_cumprod_t * noise
    end

    -- class SinusoidalPositionEmbeddings(nn.Module):
    local SinusoidalPositionEmbeddings = nn.Module:extend("SinusoidalPositionEmbeddings")
    function SinusoidalPositionEmbeddings:init(dim)
        self.dim = dim
    end

    function SinusoidalPositionEmbeddings:forward(time)
        local device = time.device
        -- half_dim = self.dim // 2
        local half_dim = math.floor(self.dim / 2)
        local embeddings = math.log(10000) / (half_dim - 1)
        -- embeddings = torch.exp(torch.arange(half_dim, device=device) * -embeddings)
        embeddings = tide.exp(tide.arange(half_dim, { device = device }) * -embeddings)
        -- embeddings = time[:, None] * embeddings[None, :]
        embeddings = time[{ {}, tide.newaxis }] * embeddings[{ tide.newaxis, {} }]
        -- embeddings = torch.cat((embeddings.sin(), embeddings.cos()), dim=-1)
        embeddings = tide.cat({ embeddings:sin(), embeddings:cos() }, { dim = -1 })
        return embeddings
    end

    -- class Block(nn.Module): conv -> GroupNorm -> SiLU, the time embedding added per channel
    local Block = nn.Module:extend("Block")
    function Block:init(in_ch, out_ch, time_emb_dim, groups)
        groups = groups or 2
        -- self.time_mlp = nn.Linear(time_emb_dim, out_ch)
        self.time_mlp = nn.Linear(time_emb_dim, out_ch)
        -- self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, { padding = 1 })
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, { padding = 1 })
        -- self.norm1 = nn.GroupNorm(groups, out_ch)
        self.norm1 = nn.GroupNorm(groups, out_ch)
        self.norm2 = nn.GroupNorm(groups, out_ch)
        self.act = nn.SiLU()
    end

    function Block:forward(x, t)
        local h = self.act(self.norm1(self.conv1(x)))
        local time_emb = self.act(self.time_mlp(t))
        -- time_emb = time_emb[(..., ) + (None, ) * 2]
        time_emb = time_emb[{ "...", tide.newaxis, tide.newaxis }]
        h = h + time_emb
        h = self.act(self.norm2(self.conv2(h)))
        return h
    end

    -- class TinyDenoiser(nn.Module):
    local TinyDenoiser = nn.Module:extend("TinyDenoiser")
    function TinyDenoiser:init(image_channels, ch, time_emb_dim)
        -- self.time_mlp = nn.Sequential(SinusoidalPositionEmbeddings(time_emb_dim),
        --     nn.Linear(time_emb_dim, time_emb_dim), nn.ReLU())
        self.time_mlp = nn.Sequential(SinusoidalPositionEmbeddings(time_emb_dim),
            nn.Linear(time_emb_dim, time_emb_dim), nn.ReLU())
        self.conv0 = nn.Conv2d(image_channels, ch, 3, { padding = 1 })
        -- self.blocks = nn.ModuleList([Block(ch, ch, time_emb_dim) for _ in range(2)])
        local blocks = {}
        for i = 1, 2 do blocks[i] = Block(ch, ch, time_emb_dim) end
        self.blocks = nn.ModuleList(blocks)
        self.output = nn.Conv2d(ch, image_channels, 1)
    end

    function TinyDenoiser:forward(x, timestep)
        -- t = self.time_mlp(timestep)
        local t = self.time_mlp(timestep)
        x = self.conv0(x)
        -- for block in self.blocks: x = block(x, t)
        for _, block in ipairs(self.blocks) do
            x = block(x, t)
        end
        return self.output(x)
    end

    -- def p_losses(denoise_model, x_start, t, noise=None, loss_type="l1"):
    local function p_losses(denoise_model, x_start, t, noise, loss_type)
        loss_type = loss_type or "l1"
        if noise == nil then
            noise = tide.randn_like(x_start)
        end
        -- x_noisy = q_sample(x_start=x_start, t=t, noise=noise)
        local x_noisy = q_sample(x_start, t, noise)
        local predicted_noise = denoise_model(x_noisy, t)
        local loss
        if loss_type == "l1" then
            loss = F.l1_loss(noise, predicted_noise)
        elseif loss_type == "l2" then
            loss = F.mse_loss(noise, predicted_noise)
        elseif loss_type == "huber" then
            loss = F.smooth_l1_loss(noise, predicted_noise)
        else
            error("NotImplementedError()")
        end
        return loss
    end

    it("the schedule, extract and q_sample against PyTorch 1.13 (timesteps = 20)", function()
        local function near(t, i, want, tol)
            assert.is_true(close(t[i]:item(), want, tol or 1e-6), tostring(i) .. ": " ..
                tostring(t[i]:item()) .. " vs " .. tostring(want))
        end
        assert.are.same({ 20 }, betas.shape)
        near(betas, 2, 0.0011473683)
        near(betas, 20, 0.0199999996)
        near(alphas_cumprod, 1, 0.9998999834)
        near(alphas_cumprod, 20, 0.8167770505)
        assert.are.same({ 20 }, alphas_cumprod_prev.shape)
        near(alphas_cumprod_prev, 1, 1.0)
        near(alphas_cumprod_prev, 20, 0.8334459662)
        near(sqrt_recip_alphas, 20, 1.0101525784)
        near(sqrt_one_minus_alphas_cumprod, 1, 0.0100008296, 1e-5)
        near(sqrt_one_minus_alphas_cumprod, 11, 0.2392092347)
        near(posterior_variance, 1, 0.0)
        near(posterior_variance, 2, 9.20044e-05, 1e-4)
        near(posterior_variance, 20, 0.0181804765, 1e-5)
        local cos = cosine_beta_schedule(timesteps)
        assert.are.same({ 20 }, cos.shape)
        near(cos, 1, 0.0079926848, 1e-5)
        near(cos, 10, 0.1359221339, 1e-5)
        near(cos, 20, 0.9998999834)
        -- extract(sqrt_alphas_cumprod, torch.tensor([0, 9, 19]), (3, 1, 8, 8)): 1-based steps
        local e = extract(sqrt_alphas_cumprod, tide.tensor({ 1, 10, 20 }), { 3, 1, 8, 8 })
        assert.are.same({ 3, 1, 1, 1 }, e.shape)
        assert.is_true(tide.allclose(e:flatten(), tide.tensor({ 0.9999499917, 0.9761424661, 0.9037572145 })))
        -- q_sample(x0, torch.tensor([10]), noise) with x0 = arange(4)/4, noise = 0.5
        local x0 = tide.arange(4.):view(1, 1, 2, 2) / 4
        local q = q_sample(x0, tide.tensor({ 11 }), tide.ones(1, 1, 2, 2) * 0.5)
        assert.is_true(tide.allclose(q:flatten(),
            tide.tensor({ 0.1196046174, 0.3623466492, 0.6050886512, 0.8478306532 }), { atol = 1e-6 }))
        -- SinusoidalPositionEmbeddings(8)(torch.tensor([0., 5., 19.]))
        local emb = SinusoidalPositionEmbeddings(8)(tide.tensor({ 0., 5., 19. }))
        assert.are.same({ 3, 8 }, emb.shape)
        assert.is_true(tide.allclose(emb, tide.tensor({
            { 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0 },
            { -0.9589242935, 0.2300017178, 0.0107719656, 0.0005000000, 0.2836622000, 0.9731902480,
                0.9999420047, 0.9999998808 },
            { 0.1498772055, 0.7719492316, 0.0409228317, 0.0018999986, 0.9887046218, 0.6356841326,
                0.9991623163, 0.9999982118 } }), { atol = 1e-5 }))
    end)

    it("train a tiny denoiser on 1x8x8 images, then the p_sample loop", function()
        tide.manual_seed(0)
        local device = tide.device("cpu")
        local image_size, channels, batch_size = 8, 1, 8
        -- model = TinyDenoiser(...).to(device)
        local model = TinyDenoiser(channels, 4, 8):to(device)
        -- optimizer = Adam(model.parameters(), lr=1e-3)
        local optimizer = tide.optim.Adam(model:parameters(), { lr = 1e-2 })
        local data = tide.rand(batch_size, channels, image_size, image_size) * 2 - 1
        local losses = {}
        for step = 1, 12 do
            optimizer:zero_grad()
            local batch = data
            -- t = torch.randint(0, timesteps, (batch_size,), device=device).long()
            local t = tide.randint(1, timesteps + 1, { batch_size }, { device = device }):long()
            -- loss = p_losses(model, batch, t, loss_type="huber")
            local loss_type = step % 3 == 0 and "l2" or (step % 3 == 1 and "huber" or "l1")
            local loss = p_losses(model, batch, t, nil, loss_type)
            assert_finite(loss:item(), "loss")
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = { loss_type, loss:item() }
        end
        -- the same noise and steps before and after: the huber loss went down
        tide.manual_seed(5)
        local t = tide.randint(1, timesteps + 1, { batch_size }):long()
        local noise = tide.randn_like(data)
        local after = p_losses(model, data, t, noise, "huber"):item()
        local fresh = TinyDenoiser(channels, 4, 8)
        local before = p_losses(fresh, data, t, noise, "huber"):item()
        assert_finite(after, "loss")
        assert.is_true(after < before, after .. " vs " .. before)

        -- @torch.no_grad()
        -- def p_sample(model, x, t, t_index):
        local p_sample = tide.no_grad()(function(model_, x, t_, t_index)
            local betas_t = extract(betas, t_, x.shape)
            local sqrt_one_minus_alphas_cumprod_t = extract(sqrt_one_minus_alphas_cumprod, t_, x.shape)
            local sqrt_recip_alphas_t = extract(sqrt_recip_alphas, t_, x.shape)
            -- model_mean = sqrt_recip_alphas_t * (x - betas_t * model(x, t) / sqrt_one_minus_alphas_cumprod_t)
            local model_mean = sqrt_recip_alphas_t * (x - betas_t * model_(x, t_) / sqrt_one_minus_alphas_cumprod_t)
            -- if t_index == 0:
            if t_index == 1 then
                return model_mean
            else
                local posterior_variance_t = extract(posterior_variance, t_, x.shape)
                local noise_ = tide.randn_like(x)
                -- return model_mean + torch.sqrt(posterior_variance_t) * noise
                return model_mean + tide.sqrt(posterior_variance_t) * noise_
            end
        end)

        -- @torch.no_grad()
        -- def p_sample_loop(model, shape):
        local p_sample_loop = tide.no_grad()(function(model_, shape)
            -- device = next(model.parameters()).device
            local device_ = model_:parameters()[1].device
            -- b = shape[0]
            local b = shape[1]
            -- img = torch.randn(shape, device=device)
            local img = tide.randn(shape, { device = device_ })
            local imgs = {}
            -- for i in tqdm(reversed(range(0, timesteps)), desc='sampling loop time step', total=timesteps):
            for i = timesteps, 1, -1 do
                -- img = p_sample(model, img, torch.full((b,), i, device=device, dtype=torch.long), i)
                img = p_sample(model_, img, tide.full({ b }, i, { device = device_, dtype = tide.long }), i)
                assert.is_false(img.requires_grad)
                -- imgs.append(img.cpu().numpy())
                imgs[#imgs + 1] = img:cpu()
            end
            return imgs
        end)

        -- def sample(model, image_size, batch_size=16, channels=3):
        local function sample(model_, image_size_, batch_size_, channels_)
            return p_sample_loop(model_, { batch_size_, channels_, image_size_, image_size_ })
        end

        model:eval()
        local samples = sample(model, image_size, 4, channels)
        assert.are.equal(timesteps, #samples)
        assert.are.same({ 4, 1, 8, 8 }, samples[#samples].shape)
        assert_finite(samples[#samples]:abs():max():item(), "sample")
        assert.is_nil(samples[#samples].grad_fn)
    end)
end)
