-- ported_scripts30_spec.lua — johnma2006/mamba-minimal's model.py (ModelArgs, Mamba with a tied
-- lm_head, ResidualBlock, RMSNorm, MambaBlock with its depthwise conv1d, ssm and the sequential
-- selective_scan written with einops' rearrange / repeat / einsum) and Blealtan/efficient-kan's
-- kan.py (KANLinear's grid buffer, b_splines, curve2coeff through torch.linalg.lstsq,
-- scaled_spline_weight, forward, update_grid, regularization_loss; KAN), ported line for line.
-- Each forward is checked against PyTorch 1.13 on the same deterministic weights (the i-th
-- parameter of named_parameters() filled with sin(arange(numel) * 0.37 + i) * 0.3), then trained
-- a few steps on tiny random data. The Python line stands above each Lua line that differs from it.
-- New here: nn.signature(cls, "self, x, update_grid=False", "forward") gives a user's forward (or
-- any method) Python's keywords: model(x, {update_grid = true}), layer:update_grid(x, {margin =
-- 0.1}). Both sources are the repositories' current ones (fetched).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local function assert_finite(x)
    assert.is_true(x == x and x ~= math.huge and x ~= -math.huge, "not finite: " .. tostring(x))
end

local function assert_close(expected, t, tol)
    local got = t:double():tolist()
    local function walk(e, g)
        if type(e) == "table" then
            for i = 1, #e do walk(e[i], g[i]) end
        else
            assert.is_true(math.abs(e - g) < (tol or 1e-5), ("expected %.8g, got %.8g"):format(e, g))
        end
    end
    walk(expected, got)
end

-- the deterministic fill of the Python reference (named_parameters order, 0-based i)
local function fill(model)
    tide.no_grad(function()
        local i = 0
        for _, p in ipairs(model:parameters()) do
            local v = tide.sin(tide.arange(p:numel(), { dtype = tide.float64 }) * 0.37 + i) * 0.3
            p:copy_(v:view(p.shape))
            i = i + 1
        end
    end)
end

---------------------------------------------------------------------------------------------
-- 1. johnma2006/mamba-minimal model.py
---------------------------------------------------------------------------------------------
describe("mamba-minimal model.py", function()
    -- from einops import rearrange, repeat, einsum
    local rearrange, repeat_, einsum = tide.einops.rearrange, tide.einops.repeat_, tide.einops.einsum

    -- @dataclass class ModelArgs: (a constructor taking the fields by name, then __post_init__)
    local function ModelArgs(a)
        local self = {
            d_model = a.d_model, n_layer = a.n_layer, vocab_size = a.vocab_size,
            d_state = a.d_state or 16, expand = a.expand or 2, dt_rank = a.dt_rank or "auto",
            d_conv = a.d_conv or 4, pad_vocab_size_multiple = a.pad_vocab_size_multiple or 8,
            conv_bias = a.conv_bias == nil and true or a.conv_bias, bias = a.bias or false,
        }
        -- def __post_init__(self):
        -- self.d_inner = int(self.expand * self.d_model)
        self.d_inner = math.floor(self.expand * self.d_model)
        if self.dt_rank == "auto" then
            self.dt_rank = math.ceil(self.d_model / 16)
        end
        if self.vocab_size % self.pad_vocab_size_multiple ~= 0 then
            self.vocab_size = self.vocab_size + (self.pad_vocab_size_multiple
                - self.vocab_size % self.pad_vocab_size_multiple)
        end
        return self
    end

    local RMSNorm = nn.Module:extend("RMSNorm")
    -- def __init__(self, d_model: int, eps: float = 1e-5):
    function RMSNorm:init(d_model, eps)
        self.eps = eps or 1e-5
        self.weight = nn.Parameter(tide.ones(d_model))
    end

    function RMSNorm:forward(x)
        -- output = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
        local output = x * tide.rsqrt(x:pow(2):mean(-1, { keepdim = true }) + self.eps) * self.weight
        return output
    end

    local MambaBlock = nn.Module:extend("MambaBlock")
    function MambaBlock:init(args)
        self.args = args
        -- self.in_proj = nn.Linear(args.d_model, args.d_inner * 2, bias=args.bias)
        self.in_proj = nn.Linear(args.d_model, args.d_inner * 2, { bias = args.bias })
        -- self.conv1d = nn.Conv1d(in_channels=..., out_channels=..., bias=..., kernel_size=...,
        --                         groups=args.d_inner, padding=args.d_conv - 1)
        self.conv1d = nn.Conv1d({
            in_channels = args.d_inner,
            out_channels = args.d_inner,
            bias = args.conv_bias,
            kernel_size = args.d_conv,
            groups = args.d_inner,
            padding = args.d_conv - 1,
        })
        -- self.x_proj = nn.Linear(args.d_inner, args.dt_rank + args.d_state * 2, bias=False)
        self.x_proj = nn.Linear(args.d_inner, args.dt_rank + args.d_state * 2, { bias = false })
        -- self.dt_proj = nn.Linear(args.dt_rank, args.d_inner, bias=True)
        self.dt_proj = nn.Linear(args.dt_rank, args.d_inner, { bias = true })
        -- A = repeat(torch.arange(1, args.d_state + 1), 'n -> d n', d=args.d_inner)
        local A = repeat_(tide.arange(1, args.d_state + 1), "n -> d n", { d = args.d_inner })
        self.A_log = nn.Parameter(tide.log(A))
        self.D = nn.Parameter(tide.ones(args.d_inner))
        -- self.out_proj = nn.Linear(args.d_inner, args.d_model, bias=args.bias)
        self.out_proj = nn.Linear(args.d_inner, args.d_model, { bias = args.bias })
    end

    function MambaBlock:forward(x)
        -- (b, l, d) = x.shape
        local b, l, d = unpack(x.shape) -- luacheck: ignore
        local x_and_res = self.in_proj(x) -- shape (b, l, 2 * d_in)
        -- (x, res) = x_and_res.split(split_size=[self.args.d_inner, self.args.d_inner], dim=-1)
        local res
        x, res = unpack(x_and_res:split({ split_size = { self.args.d_inner, self.args.d_inner }, dim = -1 }))
        x = rearrange(x, "b l d_in -> b d_in l")
        -- x = self.conv1d(x)[:, :, :l]
        x = self.conv1d(x)[{ {}, {}, { 1, l } }]
        x = rearrange(x, "b d_in l -> b l d_in")
        x = F.silu(x)
        local y = self:ssm(x)
        y = y * F.silu(res)
        local output = self.out_proj(y)
        return output
    end

    function MambaBlock:ssm(x)
        -- (d_in, n) = self.A_log.shape
        local d_in, n = unpack(self.A_log.shape) -- luacheck: ignore
        -- A = -torch.exp(self.A_log.float())  # shape (d_in, n)
        local A = -tide.exp(self.A_log:float())
        local D = self.D:float()
        local x_dbl = self.x_proj(x) -- (b, l, dt_rank + 2*n)
        -- (delta, B, C) = x_dbl.split(split_size=[self.args.dt_rank, n, n], dim=-1)
        local delta, B, C = unpack(x_dbl:split({ split_size = { self.args.dt_rank, n, n }, dim = -1 }))
        delta = F.softplus(self.dt_proj(delta)) -- (b, l, d_in)
        local y = self:selective_scan(x, delta, A, B, C, D)
        return y
    end

    function MambaBlock:selective_scan(u, delta, A, B, C, D)
        -- (b, l, d_in) = u.shape
        local b, l, d_in = unpack(u.shape)
        -- n = A.shape[1]
        local n = A.shape[2]
        -- deltaA = torch.exp(einsum(delta, A, 'b l d_in, d_in n -> b l d_in n'))
        local deltaA = tide.exp(einsum(delta, A, "b l d_in, d_in n -> b l d_in n"))
        local deltaB_u = einsum(delta, B, u, "b l d_in, b l n, b l d_in -> b l d_in n")
        -- x = torch.zeros((b, d_in, n), device=deltaA.device)
        local x = tide.zeros({ b, d_in, n }, { device = deltaA.device })
        local ys = {}
        -- for i in range(l):
        for i = 1, l do
            -- x = deltaA[:, i] * x + deltaB_u[:, i]
            x = deltaA[{ {}, i }] * x + deltaB_u[{ {}, i }]
            -- y = einsum(x, C[:, i, :], 'b d_in n, b n -> b d_in')
            local y = einsum(x, C[{ {}, i, {} }], "b d_in n, b n -> b d_in")
            ys[#ys + 1] = y
        end
        -- y = torch.stack(ys, dim=1)  # shape (b, l, d_in)
        local y = tide.stack(ys, { dim = 2 })
        y = y + u * D
        return y
    end

    local ResidualBlock = nn.Module:extend("ResidualBlock")
    function ResidualBlock:init(args)
        self.args = args
        self.mixer = MambaBlock(args)
        self.norm = RMSNorm(args.d_model)
    end

    function ResidualBlock:forward(x)
        local output = self.mixer(self.norm(x)) + x
        return output
    end

    local Mamba = nn.Module:extend("Mamba")
    function Mamba:init(args)
        self.args = args
        self.embedding = nn.Embedding(args.vocab_size, args.d_model)
        -- self.layers = nn.ModuleList([ResidualBlock(args) for _ in range(args.n_layer)])
        local layers = {}
        for _ = 1, args.n_layer do layers[#layers + 1] = ResidualBlock(args) end
        self.layers = nn.ModuleList(layers)
        self.norm_f = RMSNorm(args.d_model)
        -- self.lm_head = nn.Linear(args.d_model, args.vocab_size, bias=False)
        self.lm_head = nn.Linear(args.d_model, args.vocab_size, { bias = false })
        self.lm_head.weight = self.embedding.weight -- Tie output projection to embedding weights.
    end

    function Mamba:forward(input_ids)
        local x = self.embedding(input_ids)
        -- for layer in self.layers:
        for _, layer in ipairs(self.layers) do
            x = layer(x)
        end
        x = self.norm_f(x)
        local logits = self.lm_head(x)
        return logits
    end

    it("ModelArgs: d_inner, dt_rank 'auto', vocab padded to pad_vocab_size_multiple", function()
        local args = ModelArgs({ d_model = 8, n_layer = 2, vocab_size = 13, d_state = 4 })
        assert.are.equal(16, args.vocab_size)
        assert.are.equal(16, args.d_inner)
        assert.are.equal(1, args.dt_rank)
    end)

    it("Mamba forward matches PyTorch 1.13 on deterministic weights, then trains", function()
        local args = ModelArgs({ d_model = 8, n_layer = 2, vocab_size = 13, d_state = 4 })
        local model = Mamba(args)
        -- the tied lm_head.weight is named once, as PyTorch's named_parameters does
        local names = {}
        for name in pairs(model:state_dict()) do names[#names + 1] = name end
        assert.are.equal(22, #model:parameters())
        assert.is_true(rawequal(model.lm_head.weight, model.embedding.weight))
        fill(model)
        -- ids = (torch.arange(10).view(2, 5) * 7) % 13 (0-based token ids; +1 for tide)
        local ids = (tide.arange(10):view(2, 5) * 7) % 13 + 1
        local out = model(ids)
        assert.are.same({ 2, 5, 16 }, out.shape)
        assert.is_true(math.abs(out:sum():item() - -0.08525778353214264) < 1e-4)
        assert.is_true(math.abs(out:abs():sum():item() - 24.170032501220703) < 1e-4)
        assert_close({ -0.24053192138671875, 0.26639920473098755, -0.2835058271884918, 0.2912892997264862 },
            out[{ 1, 1, { 1, 4 } }])
        assert_close({ 0.11301077157258987, -0.1038394346833229, 0.09125328809022903 },
            out[{ 2, 5, { -3, -1 } }])

        -- a few next-token training steps on random ids
        tide.manual_seed(0)
        local optimizer = optim.AdamW(model:parameters(), { lr = 1e-2 })
        local data = tide.randint(1, 14, { 4, 9 })
        local first, last
        for _ = 1, 6 do
            local logits = model(data[{ {}, { 1, -2 } }])
            -- loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
            local loss = F.cross_entropy(logits:view(-1, logits:size(-1)), data[{ {}, { 2, -1 } }]:reshape(-1))
            optimizer:zero_grad()
            loss:backward()
            optimizer:step()
            first = first or loss:item()
            last = loss:item()
        end
        assert_finite(last)
        assert.is_true(last < first)
        assert.is_true(rawequal(model.lm_head.weight, model.embedding.weight))
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. Blealtan/efficient-kan src/efficient_kan/kan.py
---------------------------------------------------------------------------------------------
describe("efficient-kan kan.py", function()
    local KANLinear = nn.Module:extend("KANLinear")
    -- def __init__(self, in_features, out_features, grid_size=5, spline_order=3, scale_noise=0.1,
    --     scale_base=1.0, scale_spline=1.0, enable_standalone_scale_spline=True,
    --     base_activation=torch.nn.SiLU, grid_eps=0.02, grid_range=[-1, 1]):
    nn.signature(KANLinear, "in_features, out_features, grid_size=5, spline_order=3, scale_noise=0.1, "
        .. "scale_base=1.0, scale_spline=1.0, enable_standalone_scale_spline=True, "
        .. "base_activation=None, grid_eps=0.02, grid_range=[-1, 1]")
    function KANLinear:init(in_features, out_features, grid_size, spline_order, scale_noise, scale_base,
                            scale_spline, enable_standalone_scale_spline, base_activation, grid_eps, grid_range)
        base_activation = base_activation or nn.SiLU
        self.in_features = in_features
        self.out_features = out_features
        self.grid_size = grid_size
        self.spline_order = spline_order

        -- h = (grid_range[1] - grid_range[0]) / grid_size
        local h = (grid_range[2] - grid_range[1]) / grid_size
        -- grid = ((torch.arange(-spline_order, grid_size + spline_order + 1) * h + grid_range[0])
        --         .expand(in_features, -1).contiguous())
        local grid = (
            (
                tide.arange(-spline_order, grid_size + spline_order + 1) * h
                + grid_range[1]
            )
            :expand(in_features, -1)
            :contiguous()
        )
        self:register_buffer("grid", grid)

        -- self.base_weight = torch.nn.Parameter(torch.Tensor(out_features, in_features))
        self.base_weight = nn.Parameter(tide.Tensor(out_features, in_features))
        self.spline_weight = nn.Parameter(
            tide.Tensor(out_features, in_features, grid_size + spline_order)
        )
        if enable_standalone_scale_spline then
            self.spline_scaler = nn.Parameter(
                tide.Tensor(out_features, in_features)
            )
        end

        self.scale_noise = scale_noise
        self.scale_base = scale_base
        self.scale_spline = scale_spline
        self.enable_standalone_scale_spline = enable_standalone_scale_spline
        self.base_activation = base_activation()
        self.grid_eps = grid_eps

        self:reset_parameters()
    end

    function KANLinear:reset_parameters()
        -- torch.nn.init.kaiming_uniform_(self.base_weight, a=math.sqrt(5) * self.scale_base)
        nn.init.kaiming_uniform_(self.base_weight, { a = math.sqrt(5) * self.scale_base })
        -- with torch.no_grad():
        tide.no_grad(function()
            local noise = (
                (
                    tide.rand(self.grid_size + 1, self.in_features, self.out_features)
                    - 1 / 2
                )
                * self.scale_noise
                / self.grid_size
            )
            -- self.spline_weight.data.copy_(
            --     (self.scale_spline if not self.enable_standalone_scale_spline else 1.0)
            --     * self.curve2coeff(self.grid.T[self.spline_order : -self.spline_order], noise))
            self.spline_weight.data:copy_(
                ((not self.enable_standalone_scale_spline) and self.scale_spline or 1.0)
                * self:curve2coeff(
                    self.grid.T[{ { self.spline_order + 1, -self.spline_order - 1 } }],
                    noise
                )
            )
            if self.enable_standalone_scale_spline then
                -- torch.nn.init.kaiming_uniform_(self.spline_scaler, a=math.sqrt(5) * self.scale_spline)
                nn.init.kaiming_uniform_(self.spline_scaler, { a = math.sqrt(5) * self.scale_spline })
            end
        end)
    end

    function KANLinear:b_splines(x)
        -- assert x.dim() == 2 and x.size(1) == self.in_features
        assert(x:dim() == 2 and x:size(2) == self.in_features)

        local grid = self.grid -- (in_features, grid_size + 2 * spline_order + 1)
        x = x:unsqueeze(-1)
        -- bases = ((x >= grid[:, :-1]) & (x < grid[:, 1:])).to(x.dtype)
        local bases = ((x:ge(grid[{ {}, { 1, -2 } }])):logical_and(x:lt(grid[{ {}, { 2, -1 } }]))):to(x.dtype)
        -- for k in range(1, self.spline_order + 1):
        for k = 1, self.spline_order do
            bases = (
                -- (x - grid[:, : -(k + 1)]) / (grid[:, k:-1] - grid[:, : -(k + 1)]) * bases[:, :, :-1]
                (x - grid[{ {}, { 1, -(k + 2) } }])
                / (grid[{ {}, { k + 1, -2 } }] - grid[{ {}, { 1, -(k + 2) } }])
                * bases[{ {}, {}, { 1, -2 } }]
            ) + (
                -- (grid[:, k + 1 :] - x) / (grid[:, k + 1 :] - grid[:, 1:(-k)]) * bases[:, :, 1:]
                (grid[{ {}, { k + 2, -1 } }] - x)
                / (grid[{ {}, { k + 2, -1 } }] - grid[{ {}, { 2, -(k + 1) } }])
                * bases[{ {}, {}, { 2, -1 } }]
            )
        end

        -- assert bases.size() == (x.size(0), self.in_features, self.grid_size + self.spline_order)
        assert(bases:size() == tide.Size({ x:size(1), self.in_features, self.grid_size + self.spline_order }))
        return bases:contiguous()
    end

    function KANLinear:curve2coeff(x, y)
        assert(x:dim() == 2 and x:size(2) == self.in_features)
        assert(y:size() == tide.Size({ x:size(1), self.in_features, self.out_features }))

        -- A = self.b_splines(x).transpose(0, 1)  # (in_features, batch_size, grid_size + spline_order)
        local A = self:b_splines(x):transpose(
            1, 2
        )
        local B = y:transpose(1, 2) -- (in_features, batch_size, out_features)
        -- solution = torch.linalg.lstsq(A, B).solution
        -- GAP: tide.linalg.lstsq returns the solution itself, and a tensor's .solution is a silent
        -- nil (only .values/.indices raise, in lua/tensor.c): the Lua form drops the field
        local solution = tide.linalg.lstsq(
            A, B
        ) -- (in_features, grid_size + spline_order, out_features)
        -- result = solution.permute(2, 0, 1)
        local result = solution:permute(
            3, 1, 2
        ) -- (out_features, in_features, grid_size + spline_order)

        assert(result:size() == tide.Size({
            self.out_features,
            self.in_features,
            self.grid_size + self.spline_order,
        }))
        return result:contiguous()
    end

    -- @property def scaled_spline_weight(self): (a method here)
    function KANLinear:scaled_spline_weight()
        return self.spline_weight * (
            self.enable_standalone_scale_spline
            and self.spline_scaler:unsqueeze(-1)
            or 1.0
        )
    end

    function KANLinear:forward(x)
        assert(x:size(-1) == self.in_features)
        local original_shape = x.shape
        x = x:reshape(-1, self.in_features)

        local base_output = F.linear(self.base_activation(x), self.base_weight)
        local spline_output = F.linear(
            -- self.b_splines(x).view(x.size(0), -1),
            self:b_splines(x):view(x:size(1), -1),
            self:scaled_spline_weight():view(self.out_features, -1)
        )
        local output = base_output + spline_output

        -- output = output.reshape(*original_shape[:-1], self.out_features)
        output = output:reshape(tide.Size(original_shape)[{ { 1, -2 } }] + { self.out_features })
        return output
    end

    -- @torch.no_grad()
    -- def update_grid(self, x: torch.Tensor, margin=0.01):
    KANLinear.update_grid = tide.no_grad()(function(self, x, margin)
        assert(x:dim() == 2 and x:size(2) == self.in_features)
        local batch = x:size(1)

        local splines = self:b_splines(x) -- (batch, in, coeff)
        -- splines = splines.permute(1, 0, 2)  # (in, batch, coeff)
        splines = splines:permute(2, 1, 3)
        local orig_coeff = self:scaled_spline_weight() -- (out, in, coeff)
        -- orig_coeff = orig_coeff.permute(1, 2, 0)  # (in, coeff, out)
        orig_coeff = orig_coeff:permute(2, 3, 1)
        local unreduced_spline_output = tide.bmm(splines, orig_coeff) -- (in, batch, out)
        unreduced_spline_output = unreduced_spline_output:permute(
            2, 1, 3
        ) -- (batch, in, out)

        -- sort each channel individually to collect data distribution
        -- x_sorted = torch.sort(x, dim=0)[0]
        local x_sorted = tide.sort(x, { dim = 1 })
        -- grid_adaptive = x_sorted[torch.linspace(0, batch - 1, self.grid_size + 1,
        --                          dtype=torch.int64, device=x.device)]
        local grid_adaptive = x_sorted[
            tide.linspace(
                1, batch, self.grid_size + 1, { dtype = tide.int64, device = x.device }
            )
        ]

        -- uniform_step = (x_sorted[-1] - x_sorted[0] + 2 * margin) / self.grid_size
        local uniform_step = (x_sorted[-1] - x_sorted[1] + 2 * margin) / self.grid_size
        local grid_uniform = (
            tide.arange(
                self.grid_size + 1, { dtype = tide.float32, device = x.device }
            ):unsqueeze(2)
            * uniform_step
            + x_sorted[1]
            - margin
        )

        local grid = self.grid_eps * grid_uniform + (1 - self.grid_eps) * grid_adaptive
        -- grid = torch.concatenate([grid[:1] - uniform_step * torch.arange(self.spline_order, 0, -1,
        --     device=x.device).unsqueeze(1), grid, grid[-1:] + uniform_step * torch.arange(1,
        --     self.spline_order + 1, device=x.device).unsqueeze(1)], dim=0)
        grid = tide.concatenate(
            {
                grid[{ { 1, 1 } }]
                - uniform_step
                * tide.arange(self.spline_order, 0, -1, { device = x.device }):unsqueeze(2),
                grid,
                grid[{ { -1, -1 } }]
                + uniform_step
                * tide.arange(1, self.spline_order + 1, { device = x.device }):unsqueeze(2),
            },
            { dim = 1 }
        )

        self.grid:copy_(grid.T)
        self.spline_weight.data:copy_(self:curve2coeff(x, unreduced_spline_output))
    end)
    nn.signature(KANLinear, "self, x: torch.Tensor, margin=0.01", "update_grid")

    -- def regularization_loss(self, regularize_activation=1.0, regularize_entropy=1.0):
    function KANLinear:regularization_loss(regularize_activation, regularize_entropy)
        local l1_fake = self.spline_weight:abs():mean(-1)
        local regularization_loss_activation = l1_fake:sum()
        local p = l1_fake / regularization_loss_activation
        local regularization_loss_entropy = -tide.sum(p * p:log())
        return (
            regularize_activation * regularization_loss_activation
            + regularize_entropy * regularization_loss_entropy
        )
    end
    nn.signature(KANLinear, "self, regularize_activation=1.0, regularize_entropy=1.0", "regularization_loss")

    local KAN = nn.Module:extend("KAN")
    nn.signature(KAN, "layers_hidden, grid_size=5, spline_order=3, scale_noise=0.1, scale_base=1.0, "
        .. "scale_spline=1.0, base_activation=None, grid_eps=0.02, grid_range=[-1, 1]")
    function KAN:init(layers_hidden, grid_size, spline_order, scale_noise, scale_base, scale_spline,
                      base_activation, grid_eps, grid_range)
        self.grid_size = grid_size
        self.spline_order = spline_order

        self.layers = nn.ModuleList()
        -- for in_features, out_features in zip(layers_hidden, layers_hidden[1:]):
        for i = 1, #layers_hidden - 1 do
            local in_features, out_features = layers_hidden[i], layers_hidden[i + 1]
            self.layers:append(
                KANLinear(
                    in_features,
                    out_features,
                    {
                        grid_size = grid_size,
                        spline_order = spline_order,
                        scale_noise = scale_noise,
                        scale_base = scale_base,
                        scale_spline = scale_spline,
                        base_activation = base_activation,
                        grid_eps = grid_eps,
                        grid_range = grid_range,
                    }
                )
            )
        end
    end

    function KAN:forward(x, update_grid)
        for _, layer in ipairs(self.layers) do
            if update_grid then
                layer:update_grid(x)
            end
            x = layer(x)
        end
        return x
    end
    -- def forward(self, x: torch.Tensor, update_grid=False):
    nn.signature(KAN, "self, x: torch.Tensor, update_grid=False", "forward")

    function KAN:regularization_loss(regularize_activation, regularize_entropy)
        -- return sum(layer.regularization_loss(regularize_activation, regularize_entropy)
        --            for layer in self.layers)
        local total = 0
        for _, layer in ipairs(self.layers) do
            total = total + layer:regularization_loss(regularize_activation, regularize_entropy)
        end
        return total
    end
    nn.signature(KAN, "self, regularize_activation=1.0, regularize_entropy=1.0", "regularization_loss")

    it("KANLinear: b_splines, forward, regularization_loss and update_grid match PyTorch 1.13", function()
        tide.manual_seed(0)
        local layer = KANLinear(3, 2)
        assert.are.same({ 3, 12 }, layer.grid.shape)
        fill(layer)
        -- x = torch.sin(torch.arange(12, dtype=torch.float32).view(4, 3) * 0.9) * 0.95
        local x = tide.sin(tide.arange(12, { dtype = tide.float32 }):view(4, 3) * 0.9) * 0.95
        local bs = layer:b_splines(x)
        assert.are.same({ 4, 3, 8 }, bs.shape)
        assert.is_true(math.abs(bs:sum():item() - 12) < 1e-5)
        assert_close({ 0.0, 0.0, 0.020833343267440796, 0.4791666567325592, 0.4791666269302368,
            0.020833328366279602, 0.0, 0.0 }, bs[{ 1, 1 }])
        assert_close({ 0.0, 0.03364955633878708, 0.5311188697814941, 0.42346063256263733,
            0.011770966462790966, 0.0, 0.0, 0.0 }, bs[{ 4, 3 }])
        assert.is_true(math.abs(layer:scaled_spline_weight():sum():item() - 0.3538750112056732) < 1e-5)
        local y = layer(x)
        assert_close({ { 0.24012741446495056, 0.3612317442893982 }, { -0.06538451462984085, -0.060682982206344604 },
            { 0.14930416643619537, 0.10450679808855057 }, { -0.013213476166129112, 0.21656402945518494 } }, y)
        assert.is_true(math.abs(layer:regularization_loss():item() - 2.974343776702881) < 1e-5)

        -- xg = torch.sin(torch.arange(48, dtype=torch.float32).view(16, 3) * 1.3) * 0.8
        local xg = tide.sin(tide.arange(48, { dtype = tide.float32 }):view(16, 3) * 1.3) * 0.8
        layer:update_grid(xg)
        assert.is_false(layer.grid.requires_grad)
        assert_close({ -1.7547526359558105, -1.4330792427062988, -1.111405849456787, -0.7897323966026306,
            -0.606952428817749, -0.17109858989715576, 0.25282344222068787, 0.6583686470985413,
            0.7990347146987915, 1.1207081079483032, 1.442381501197815, 1.7640548944473267 }, layer.grid[1])
        assert_close({ { 0.20221060514450073, 0.3352973461151123 }, { -0.07053671777248383, -0.06311971694231033 },
            { 0.11748078465461731, 0.07945551723241806 }, { -0.013143563643097878, 0.1910330057144165 } },
            layer(x), 1e-4)
        assert.is_true(math.abs(layer.spline_weight:sum():item() - 0.39955228567123413) < 1e-4)
    end)

    it("KAN([4, 5, 3]) trains a few steps with regularization_loss, update_grid once", function()
        tide.manual_seed(0)
        local model = KAN({ 4, 5, 3 }, { grid_size = 4 })
        assert.are.equal(2, #model.layers)
        local x = tide.rand(32, 4) * 2 - 1
        local target = tide.randint(1, 4, { 32 })
        local optimizer = optim.AdamW(model:parameters(), { lr = 1e-2, weight_decay = 1e-4 })
        local first, last
        for step = 1, 8 do
            -- output = model(x, update_grid=(step == 0))
            local output = model(x, { update_grid = (step == 1) })
            local loss = F.cross_entropy(output, target) + 1e-5 * model:regularization_loss()
            optimizer:zero_grad()
            loss:backward()
            optimizer:step()
            first = first or loss:item()
            last = loss:item()
        end
        assert_finite(last)
        assert.is_true(last < first)
    end)

    it("nn.signature(cls, text, method): a user's forward and methods take Python's keywords", function()
        tide.manual_seed(0)
        local model = KAN({ 2, 3 }, { grid_size = 3 })
        local layer = model.layers[1]
        local x = tide.rand(8, 2) * 2 - 1
        -- model(x, update_grid=False) leaves the grid; update_grid=True moves it
        local grid = layer.grid:clone()
        local y0 = model(x, { update_grid = false })
        assert.is_true(tide.equal(grid, layer.grid))
        assert.is_true(tide.equal(y0, model(x)))
        -- regularization_loss(regularize_entropy=0) is the activation term alone
        local act = layer.spline_weight:abs():mean(-1):sum()
        assert.is_true(math.abs(layer:regularization_loss({ regularize_entropy = 0 }):item() - act:item()) < 1e-6)
        assert.is_true(math.abs(model:regularization_loss(2.0, { regularize_entropy = 0 }):item()
            - 2 * act:item()) < 1e-6)
        -- an unknown keyword or a missing argument raises, naming the method, before it runs
        local ok, err = pcall(function() return model(x, { update_grids = true }) end)
        assert.is_false(ok)
        assert.matches("KAN.forward", err, 1, true)
        assert.matches("update_grids", err, 1, true)
        assert.is_true(tide.equal(grid, layer.grid))
        ok, err = pcall(function() return layer:update_grid({ margin = 0.1 }) end)
        assert.is_false(ok)
        assert.matches("tide: KANLinear.update_grid: missing its required argument x", err, 1, true)
        assert.is_true(tide.equal(grid, layer.grid))
        ok, err = pcall(function() return layer:update_grid(x, 0.1, 3) end)
        assert.is_false(ok)
        assert.matches("KANLinear.update_grid: expected at most 2 arguments", err, 1, true)
        layer:update_grid(x, { margin = 0.1 })
        assert.is_false(tide.equal(grid, layer.grid))
        -- nn.signature's third argument: a method defined before, by name
        local Net = nn.Module:extend("Net")
        ok, err = pcall(nn.signature, Net, "self, x, scale=2", "forward")
        assert.is_false(ok)
        assert.matches("tide: nn.signature: Net has no method forward", err, 1, true)
        ok, err = pcall(nn.signature, Net, "self, x", 3)
        assert.is_false(ok)
        assert.matches("argument #3 must be the name of a method of Net", err, 1, true)
        function Net:forward(x, scale) return x * scale end
        nn.signature(Net, "self, x, scale=2", "forward")
        assert.are.equal(6, Net()(tide.tensor(3.0)):item())
        assert.are.equal(12, Net()(tide.tensor(3.0), { scale = 4 }):item())
        assert.are.equal(9, Net()(tide.tensor(3.0), 3):item())
    end)
end)
