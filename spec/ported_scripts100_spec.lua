-- ported_scripts100_spec.lua — facebookresearch/barlowtwins main.py (off_diagonal, BarlowTwins
-- with its projector built from the args string and the affine-free BatchNorm1d, LARS with
-- exclude_bias_and_norm and the torch.where trust ratio, the param_weights / param_biases groups,
-- adjust_learning_rate, the training loop) and facebookresearch/swav main_swav.py + src/resnet50.py
-- (the projection head and bias-free prototypes, forward over crops of two resolutions,
-- distributed_sinkhorn, the swapped-prediction loss, the queue, the prototypes' normalisation and
-- their frozen gradient), ported line for line at tiny sizes: a Conv2d(3, 4, 3) + BatchNorm2d +
-- ReLU + AdaptiveAvgPool2d(1) + Flatten backbone stands in for resnet50 (fc = nn.Identity()),
-- projector "8-8-8", batch 6 of 3x8x8 images. The Python line stands above each Lua line that
-- differs from it. Values are checked against PyTorch 1.13 in float64 on the same weights
-- (fill_deterministic below; /tmp reference: the same classes in plain PyTorch).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local DT = tide.float64

-- deterministic weights, the same in the Python reference: the i-th (0-based) parameter in
-- named_parameters order is sin(arange(numel) * 0.37 + i) * 0.3, plus 1 for a 1-D one of even i
local function fill_deterministic(model)
    tide.no_grad(function()
        local i = 0
        for _, p in model:named_parameters() do
            local v = tide.sin(tide.arange(p:numel(), { dtype = DT }) * 0.37 + i) * 0.3
            if p.ndim == 1 and i % 2 == 0 then v = v + 1 end
            p:copy_(v:view(p.shape))
            i = i + 1
        end
    end)
end

-- images both sides can make: sin(arange(n * 3 * 8 * 8) * a + b).view(n, 3, 8, 8)
local function views(n, a, b)
    return tide.sin(tide.arange(n * 3 * 8 * 8, { dtype = DT }) * a + b):view(n, 3, 8, 8)
end

-- the stand-in for torchvision.models.resnet50() with its fc = nn.Identity()
local function backbone()
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten())
end

-- |got - want| <= tol |want| + atol, entry by entry
local function assert_rel(want, got, tol, atol, what)
    assert(#want == #got, what .. ": length")
    for i = 1, #want do
        assert(math.abs(got[i] - want[i]) <= tol * math.abs(want[i]) + atol,
            string.format("%s[%d]: %.12g, PyTorch %.12g", what, i, got[i], want[i]))
    end
end

local function flat(t)
    return t:double():flatten():tolist()
end

---------------------------------------------------------------------------------------------
-- 1. facebookresearch/barlowtwins main.py
---------------------------------------------------------------------------------------------
-- def adjust_learning_rate(args, optimizer, loader, step):
local function adjust_learning_rate(args, optimizer, loader, step)
    -- max_steps = args.epochs * len(loader)
    local max_steps = args.epochs * #loader
    local warmup_steps = 10 * #loader
    local base_lr = args.batch_size / 256
    local lr
    if step < warmup_steps then
        lr = base_lr * step / warmup_steps
    else
        step = step - warmup_steps
        max_steps = max_steps - warmup_steps
        local q = 0.5 * (1 + math.cos(math.pi * step / max_steps))
        local end_lr = base_lr * 0.001
        lr = base_lr * q + end_lr * (1 - q)
    end
    -- optimizer.param_groups[0]['lr'] = lr * args.learning_rate_weights
    optimizer.param_groups[1]['lr'] = lr * args.learning_rate_weights
    optimizer.param_groups[2]['lr'] = lr * args.learning_rate_biases
end

-- def off_diagonal(x):
local function off_diagonal(x)
    -- return a flattened view of the off-diagonal elements of a square matrix
    -- n, m = x.shape
    local n, m = x.shape[1], x.shape[2]
    assert(n == m)
    -- return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()
    return x:flatten()[{ { 1, -2 } }]:view(n - 1, n + 1)[{ {}, { 2, -1 } }]:flatten()
end

-- class BarlowTwins(nn.Module):
local BarlowTwins = nn.Module:extend("BarlowTwins")
function BarlowTwins:init(args)
    self.args = args
    -- self.backbone = torchvision.models.resnet50(zero_init_residual=True)
    -- self.backbone.fc = nn.Identity()
    self.backbone = backbone()
    -- projector
    -- sizes = [2048] + list(map(int, args.projector.split('-')))
    local sizes = { 4 }
    for s in args.projector:gmatch("[^-]+") do sizes[#sizes + 1] = tonumber(s) end
    local layers = {}
    -- for i in range(len(sizes) - 2):
    for i = 1, #sizes - 2 do
        -- layers.append(nn.Linear(sizes[i], sizes[i + 1], bias=False))
        layers[#layers + 1] = nn.Linear(sizes[i], sizes[i + 1], { bias = false })
        layers[#layers + 1] = nn.BatchNorm1d(sizes[i + 1])
        -- layers.append(nn.ReLU(inplace=True))
        layers[#layers + 1] = nn.ReLU({ inplace = true })
    end
    -- layers.append(nn.Linear(sizes[-2], sizes[-1], bias=False))
    layers[#layers + 1] = nn.Linear(sizes[#sizes - 1], sizes[#sizes], { bias = false })
    -- self.projector = nn.Sequential(*layers)
    self.projector = nn.Sequential(unpack(layers))
    -- normalization layer for the representations z1 and z2
    -- self.bn = nn.BatchNorm1d(sizes[-1], affine=False)
    self.bn = nn.BatchNorm1d(sizes[#sizes], { affine = false })
end

function BarlowTwins:forward(y1, y2)
    local z1 = self.projector(self.backbone(y1))
    local z2 = self.projector(self.backbone(y2))
    -- empirical cross-correlation matrix
    -- c = self.bn(z1).T @ self.bn(z2)
    local c = self.bn(z1).T:matmul(self.bn(z2))
    -- sum the cross-correlation matrix between all gpus
    c:div_(self.args.batch_size)
    -- torch.distributed.all_reduce(c)
    -- GAP: dist.all_reduce needs a started job (tide: all_reduce: the job is not started; call
    -- dist.init() first, ...), as PyTorch's needs an initialized group: one process, skipped
    -- on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
    local on_diag = tide.diagonal(c):add_(-1):pow_(2):sum()
    local off_diag = off_diagonal(c):pow_(2):sum()
    local loss = on_diag + self.args.lambd * off_diag
    return loss
end

-- class LARS(optim.Optimizer):
local LARS = optim.Optimizer:extend("LARS")
-- def __init__(self, params, lr, weight_decay=0, momentum=0.9, eta=0.001,
--              weight_decay_filter=False, lars_adaptation_filter=False):
function LARS:init(params, lr, o)
    o = o or {}
    -- defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
    --                 eta=eta, weight_decay_filter=weight_decay_filter,
    --                 lars_adaptation_filter=lars_adaptation_filter)
    local defaults = { lr = lr, weight_decay = o.weight_decay or 0, momentum = o.momentum or 0.9,
        eta = o.eta or 0.001, weight_decay_filter = o.weight_decay_filter or false,
        lars_adaptation_filter = o.lars_adaptation_filter or false }
    -- super().__init__(params, defaults)
    optim.Optimizer.init(self, params, defaults)
end

function LARS:exclude_bias_and_norm(p) -- luacheck: ignore self
    return p.ndim == 1
end

-- @torch.no_grad()
-- def step(self):
LARS.step = tide.no_grad()(function(self)
    for _, g in ipairs(self.param_groups) do
        for _, p in ipairs(g['params']) do
            local dp = p.grad
            -- if dp is None:
            --     continue
            if dp ~= nil then
                if not g['weight_decay_filter'] or not self:exclude_bias_and_norm(p) then
                    -- dp = dp.add(p, alpha=g['weight_decay'])
                    dp = dp:add(p, { alpha = g['weight_decay'] })
                end
                if not g['lars_adaptation_filter'] or not self:exclude_bias_and_norm(p) then
                    local param_norm = tide.norm(p)
                    local update_norm = tide.norm(dp)
                    local one = tide.ones_like(param_norm)
                    -- q = torch.where(param_norm > 0.,
                    --                 torch.where(update_norm > 0,
                    --                             (g['eta'] * param_norm / update_norm), one), one)
                    local q = tide.where(param_norm:gt(0.),
                        tide.where(update_norm:gt(0),
                            (g['eta'] * param_norm / update_norm), one), one)
                    dp = dp:mul(q)
                end
                local param_state = self.state[p]
                -- if 'mu' not in param_state:
                if param_state['mu'] == nil then
                    param_state['mu'] = tide.zeros_like(p)
                end
                local mu = param_state['mu']
                mu:mul_(g['momentum']):add_(dp)
                -- p.add_(mu, alpha=-g['lr'])
                p:add_(mu, { alpha = -g['lr'] })
            end
        end
    end
end)

-- args: main.py's parser defaults (learning rates, weight decay, lambd) at batch 6
local function bt_args()
    return { projector = "8-8-8", batch_size = 6, lambd = 0.0051, epochs = 12,
        learning_rate_weights = 0.2, learning_rate_biases = 0.0048, weight_decay = 1e-6 }
end

-- per parameter: the norm of its change and sum(change * arange(1, numel + 1)), as the reference
local function delta_summary(model, p0)
    local out = {}
    for i, p in ipairs(model:parameters()) do
        local d = p:detach() - p0[i]
        out[#out + 1] = d:norm():item()
        local w = tide.arange(1, d:numel() + 1, { dtype = DT }):view(d.shape)
        out[#out + 1] = (d * w):sum():item()
    end
    return out
end

describe("facebookresearch/barlowtwins main.py", function()
    it("off_diagonal and the Barlow Twins loss match PyTorch", function()
        local x = tide.arange(1, 10, { dtype = DT }):view(3, 3)
        assert.are.same({ 2, 3, 4, 6, 7, 8 }, off_diagonal(x):tolist())
        local args = bt_args()
        local model = BarlowTwins(args):to(DT)
        fill_deterministic(model)
        -- the parameters, named_parameters order (PyTorch's names with 1-based Sequential keys)
        local names = {}
        for n in model:named_parameters() do names[#names + 1] = n end
        assert.are.same({ "backbone.1.weight", "backbone.1.bias", "backbone.2.weight",
            "backbone.2.bias", "projector.1.weight", "projector.2.weight", "projector.2.bias",
            "projector.4.weight", "projector.5.weight", "projector.5.bias", "projector.7.weight" },
            names)
        local loss = model(views(6, 0.1, 0.0), views(6, 0.13, 0.5))
        assert.is_true(ported.close(loss:item(), 8.918534713126306, 1e-9))
    end)

    it("LARS over param_weights / param_biases with adjust_learning_rate: 2 steps as PyTorch's",
        function()
        local args = bt_args()
        local model = BarlowTwins(args):to(DT)
        fill_deterministic(model)
        -- model = nn.SyncBatchNorm.convert_sync_batchnorm(model)   (BatchNorm in one process)
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        local param_weights = {}
        local param_biases = {}
        -- for param in model.parameters():
        for _, param in ipairs(model:parameters()) do
            if param.ndim == 1 then
                -- param_biases.append(param)
                param_biases[#param_biases + 1] = param
            else
                param_weights[#param_weights + 1] = param
            end
        end
        -- parameters = [{'params': param_weights}, {'params': param_biases}]
        local parameters = { { params = param_weights }, { params = param_biases } }
        -- GAP: model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
        -- needs a job started by mpirun (one process here, the model used as it is)
        -- optimizer = LARS(parameters, lr=0, weight_decay=args.weight_decay,
        --                  weight_decay_filter=True,
        --                  lars_adaptation_filter=True)
        local optimizer = LARS(parameters, 0, { weight_decay = args.weight_decay,
            weight_decay_filter = true,
            lars_adaptation_filter = true })
        assert.are.equal(2, #optimizer.param_groups)
        assert.are.equal(0.001, optimizer.param_groups[2].eta)
        -- a loader of two batches of two views, epoch 10 of 12: steps 20 and 21 (cosine part)
        local y1, y2 = views(6, 0.1, 0.0), views(6, 0.13, 0.5)
        local loader = { { { y1, y2 } }, { { views(6, 0.21, 1.0), views(6, 0.17, -0.5) } } }
        -- adjust_learning_rate on both sides of the warmup (PyTorch: the same formula)
        local lrs = {}
        for _, s in ipairs({ 0, 5, 19, 20, 23 }) do
            adjust_learning_rate(args, optimizer, loader, s)
            lrs[#lrs + 1] = optimizer.param_groups[1].lr
            lrs[#lrs + 1] = optimizer.param_groups[2].lr
        end
        assert_rel({ 0, 0, 0.001171875, 2.8125e-05, 0.004453125, 0.000106875, 0.0046875,
            0.0001125, 0.000690469513112, 1.65712683147e-05 }, lrs, 1e-11, 0, "lr")
        local p0 = {}
        for i, p in ipairs(model:parameters()) do p0[i] = p:detach():clone() end
        -- scaler = torch.cuda.amp.GradScaler()
        local scaler = tide.cuda.amp.GradScaler()
        local losses, after1 = {}, nil
        local epoch = 10
        -- for step, ((y1, y2), _) in enumerate(loader, start=epoch * len(loader)):
        for k, batch in ipairs(loader) do
            local step = epoch * #loader + (k - 1)
            local v1, v2 = batch[1][1], batch[1][2]
            adjust_learning_rate(args, optimizer, loader, step)
            optimizer:zero_grad()
            -- with torch.cuda.amp.autocast():
            --     loss = model.forward(y1, y2)
            local loss = tide.cuda.amp.autocast(function()
                return model:forward(v1, v2)
            end)
            -- scaler.scale(loss).backward()
            scaler:scale(loss):backward()
            scaler:step(optimizer)
            scaler:update()
            losses[#losses + 1] = loss:item()
            if k == 1 then after1 = delta_summary(model, p0) end
        end
        assert_finite(losses[1], "loss 1")
        assert_finite(losses[2], "loss 2")
        assert_rel({ 8.918534713126306, 1.9168558641050897 }, losses, 1e-9, 0, "losses")
        -- one LARS step: the adapted weights (LARS trust ratio, weight decay), the excluded
        -- biases / BN parameters (lr_biases * grad), the conv bias before BN (no gradient)
        assert_rel({ 1.03658385821e-05, -0.00358046699857, 0, 0, 0.0055731410362,
            0.00692672229775, 0.00645302508865, -0.00573802130488, 5.75483954155e-06,
            2.71795087961e-05, 0.00962885351302, 0.0423346111187, 1.04148151432e-15,
            1.33226762955e-14, 8.11132253646e-06, -0.000358794843254, 0.00195835875726,
            -0.00519091108404, 0.00156729418099, -0.00304824106015, 8.08737699346e-06,
            -0.000176845958092 }, after1, 1e-6, 1e-12, "step 1 change")
        -- the second step adds the momentum buffer self.state[p]['mu']
        assert_rel({ 1.59903013453e-05, -0.00490430412269, 0, 0, 0.00996517785299,
            0.0138537778797, 0.0114086108105, -0.00990484713325, 8.38712418581e-06,
            4.37574907849e-05, 0.0342202526443, 0.0650198826446, 1.99840144433e-15,
            2.59792187762e-14, 1.49633632446e-05, -0.000284680184257, 0.00314652251918,
            -0.00712110588488, 0.00253852550482, -0.00367410516978, 1.09247955689e-05,
            8.41260166454e-05 }, delta_summary(model, p0), 1e-6, 1e-12, "step 2 change")
        assert.are.same(param_weights[1].shape, optimizer.state[param_weights[1]]['mu'].shape)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. facebookresearch/swav main_swav.py and src/resnet50.py
---------------------------------------------------------------------------------------------
-- args: main_swav.py's parser at tiny sizes (crops 2x8 + 2x6, queue of one batch)
local args = { epsilon = 0.05, sinkhorn_iterations = 3, world_size = 1,
    crops_for_assign = { 0, 1 }, nmb_crops = { 2, 2 }, temperature = 0.1,
    freeze_prototypes_niters = 1, queue_length = 6, feat_dim = 8, batch_size = 6,
    base_lr = 0.3, final_lr = 0.0006, start_warmup = 0, warmup_epochs = 1, epochs = 2, wd = 1e-6 }

-- def distributed_sinkhorn(out):
local function distributed_sinkhorn(out)
    -- Q = torch.exp(out / args.epsilon).t() # Q is K-by-B
    local Q = tide.exp(out / args.epsilon):t()
    -- B = Q.shape[1] * args.world_size # number of samples to assign
    local B = Q.shape[2] * args.world_size
    -- K = Q.shape[0] # how many prototypes
    local K = Q.shape[1]

    -- make the matrix sums to 1
    local sum_Q = tide.sum(Q)
    -- dist.all_reduce(sum_Q)   (GAP: no started job, one process: skipped, as in BarlowTwins)
    -- Q /= sum_Q
    Q:div_(sum_Q)

    -- for it in range(args.sinkhorn_iterations):
    for _ = 1, args.sinkhorn_iterations do
        -- normalize each row: total weight per prototype must be 1/K
        -- sum_of_rows = torch.sum(Q, dim=1, keepdim=True)
        local sum_of_rows = tide.sum(Q, { dim = 2, keepdim = true })
        -- dist.all_reduce(sum_of_rows)   (skipped: one process)
        Q:div_(sum_of_rows)
        Q:div_(K)

        -- normalize each column: total weight per sample must be 1/B
        -- Q /= torch.sum(Q, dim=0, keepdim=True)
        Q:div_(tide.sum(Q, { dim = 1, keepdim = true }))
        Q:div_(B)
    end

    -- Q *= B # the colomns must sum to 1 so that Q is an assignment
    Q:mul_(B)
    return Q:t()
end

-- class ResNet(nn.Module): the head of src/resnet50.py over the stand-in backbone
local SwAVResNet = nn.Module:extend("SwAVResNet")
-- def __init__(..., normalize=False, output_dim=0, hidden_mlp=0, nmb_prototypes=0, ...):
function SwAVResNet:init(o)
    -- normalize
    self.l2norm = o.normalize
    self.backbone = backbone()
    local num_out_filters = 4 -- num_out_filters * block.expansion: the backbone's width here
    -- self.projection_head = nn.Sequential(
    --     nn.Linear(num_out_filters * block.expansion, hidden_mlp),
    --     nn.BatchNorm1d(hidden_mlp),
    --     nn.ReLU(inplace=True),
    --     nn.Linear(hidden_mlp, output_dim),
    -- )
    self.projection_head = nn.Sequential(
        nn.Linear(num_out_filters, o.hidden_mlp),
        nn.BatchNorm1d(o.hidden_mlp),
        nn.ReLU({ inplace = true }),
        nn.Linear(o.hidden_mlp, o.output_dim))
    -- prototype layer
    -- self.prototypes = nn.Linear(output_dim, nmb_prototypes, bias=False)
    self.prototypes = nn.Linear(o.output_dim, o.nmb_prototypes, { bias = false })
end

function SwAVResNet:forward_backbone(x)
    return self.backbone(x)
end

function SwAVResNet:forward_head(x)
    if self.projection_head ~= nil then
        x = self.projection_head(x)
    end
    if self.l2norm then
        -- x = nn.functional.normalize(x, dim=1, p=2)
        x = F.normalize(x, { dim = 2, p = 2 })
    end
    if self.prototypes ~= nil then
        return x, self.prototypes(x)
    end
    return x
end

-- def forward(self, inputs):
function SwAVResNet:forward(inputs)
    -- if not isinstance(inputs, list):
    if tide.is_tensor(inputs) then
        inputs = { inputs }
    end
    -- idx_crops = torch.cumsum(torch.unique_consecutive(
    --     torch.tensor([inp.shape[-1] for inp in inputs]),
    --     return_counts=True,
    -- )[1], 0)
    local widths = {}
    for k, inp in ipairs(inputs) do widths[k] = inp.shape[#inp.shape] end
    local _, counts = tide.unique_consecutive(tide.tensor(widths), { return_counts = true })
    local idx_crops = tide.cumsum(counts, 1)
    local start_idx = 0
    local output
    -- for end_idx in idx_crops:
    for _, end_idx in ipairs(idx_crops:tolist()) do
        -- _out = self.forward_backbone(torch.cat(inputs[start_idx: end_idx]).cuda(
        --     non_blocking=True))
        local _out = self:forward_backbone(tide.cat({ unpack(inputs, start_idx + 1, end_idx) }))
        if start_idx == 0 then
            output = _out
        else
            -- output = torch.cat((output, _out))
            output = tide.cat({ output, _out })
        end
        start_idx = end_idx
    end
    return self:forward_head(output)
end

-- crops of one batch: two 8x8 views and two 6x6 ones (MultiCropDataset's size_crops [8, 6])
local function crops(k)
    return { views(6, 0.1 + 0.01 * k, 0.0), views(6, 0.13 + 0.01 * k, 0.5),
        views(6, 0.07 + 0.01 * k, 1.0)[{ {}, {}, { 2, 7 }, { 2, 7 } }],
        views(6, 0.05 + 0.01 * k, 2.0)[{ {}, {}, { 1, 6 }, { 3, 8 } }] }
end

-- np.sum(args.nmb_crops)
local function nmb_crops_sum()
    local s = 0
    for _, n in ipairs(args.nmb_crops) do s = s + n end
    return s
end

-- def train(train_loader, model, optimizer, epoch, lr_schedule, queue):
local function train(train_loader, model, optimizer, epoch, lr_schedule, queue, record)
    model:train()
    local use_the_queue = false
    local losses = {}
    -- for it, inputs in enumerate(train_loader):
    for it, inputs in ipairs(train_loader) do
        -- update learning rate
        -- iteration = epoch * len(train_loader) + it   (it 0-based there)
        local iteration = epoch * #train_loader + (it - 1)
        for _, param_group in ipairs(optimizer.param_groups) do
            -- param_group["lr"] = lr_schedule[iteration]
            param_group["lr"] = lr_schedule[iteration + 1]:item()
        end

        -- normalize the prototypes
        tide.no_grad(function()
            -- w = model.module.prototypes.weight.data.clone()
            local w = model.prototypes.weight.data:clone()
            -- w = nn.functional.normalize(w, dim=1, p=2)
            w = F.normalize(w, { dim = 2, p = 2 })
            model.prototypes.weight:copy_(w)
        end)

        -- ============ multi-res forward passes ... ============
        local embedding, output = model(inputs)
        embedding = embedding:detach()
        -- bs = inputs[0].size(0)
        local bs = inputs[1]:size(1)

        -- ============ swav loss ... ============
        local loss = 0
        -- for i, crop_id in enumerate(args.crops_for_assign):
        for i, crop_id in ipairs(args.crops_for_assign) do
            local q
            tide.no_grad(function()
                -- out = output[bs * crop_id: bs * (crop_id + 1)].detach()
                local out = output[{ { bs * crop_id + 1, bs * (crop_id + 1) } }]:detach()

                -- time to use the queue
                if queue ~= nil then
                    -- if use_the_queue or not torch.all(queue[i, -1, :] == 0):
                    if use_the_queue or not tide.all(queue[{ i, -1, {} }]:eq(0)):item() then
                        use_the_queue = true
                        -- out = torch.cat((torch.mm(
                        --     queue[i],
                        --     model.module.prototypes.weight.t()
                        -- ), out))
                        out = tide.cat({ tide.mm(
                            queue[i],
                            model.prototypes.weight:t()
                        ), out })
                    end
                    -- fill the queue
                    -- queue[i, bs:] = queue[i, :-bs].clone()
                    queue[{ i, { bs + 1, -1 } }] = queue[{ i, { 1, -bs - 1 } }]:clone()
                    -- queue[i, :bs] = embedding[crop_id * bs: (crop_id + 1) * bs]
                    queue[{ i, { 1, bs } }] =
                        embedding[{ { crop_id * bs + 1, (crop_id + 1) * bs } }]
                end

                -- get assignments
                -- q = distributed_sinkhorn(out)[-bs:]
                q = distributed_sinkhorn(out)[{ { -bs, -1 } }]
            end)
            if record then record[#record + 1] = q end

            -- cluster assignment prediction
            local subloss = 0
            -- for v in np.delete(np.arange(np.sum(args.nmb_crops)), crop_id):
            for v = 0, nmb_crops_sum() - 1 do
                if v ~= crop_id then
                    -- x = output[bs * v: bs * (v + 1)] / args.temperature
                    local x = output[{ { bs * v + 1, bs * (v + 1) } }] / args.temperature
                    -- subloss -= torch.mean(torch.sum(q * F.log_softmax(x, dim=1), dim=1))
                    subloss = subloss - tide.mean(tide.sum(q * F.log_softmax(x, { dim = 2 }),
                        { dim = 2 }))
                end
            end
            -- loss += subloss / (np.sum(args.nmb_crops) - 1)
            loss = loss + subloss / (nmb_crops_sum() - 1)
        end
        -- loss /= len(args.crops_for_assign)
        loss = loss / #args.crops_for_assign

        -- ============ backward and optim step ... ============
        optimizer:zero_grad()
        loss:backward()
        -- cancel gradients for the prototypes
        if iteration < args.freeze_prototypes_niters then
            for name, p in model:named_parameters() do
                -- if "prototypes" in name:
                if name:find("prototypes", 1, true) then
                    p.grad = nil
                end
            end
        end
        optimizer:step()
        losses[#losses + 1] = loss:item()
        if record then record.used = record.used or {}; record.used[it] = use_the_queue end
    end
    return losses, queue
end

describe("facebookresearch/swav main_swav.py", function()
    it("distributed_sinkhorn's Q matches PyTorch and is an assignment", function()
        -- out = torch.sin(torch.arange(30.).view(6, 5) * 0.7) * 0.2   (B = 6 samples, K = 5)
        local out = tide.sin(tide.arange(30, { dtype = DT }) * 0.7):view(6, 5) * 0.2
        local Q = distributed_sinkhorn(out)
        assert.are.same({ 6, 5 }, Q.shape)
        assert_rel({ 0.00848266962038, 0.114860563827, 0.543809717697, 0.324713475194,
            0.00813357366241, 0.368365514087, 0.0472157938666, 0.0366412046905, 0.145361326172,
            0.402416161184, 0.126064414211, 0.488013213416, 0.345854271528, 0.0395403058475,
            0.000527794996741, 0.00570232526037, 0.00394231887311, 0.0202040664003,
            0.266728092395, 0.703423197071, 0.6019406869, 0.34707460499, 0.0478934228993,
            0.00300874882716, 8.25363838785e-05, 0.000602866296778, 0.00273446508846,
            0.0454635180976, 0.553564990922, 0.397634159595 }, flat(Q), 1e-9, 1e-15, "Q")
        -- each sample's row sums to 1 (Q *= B)
        assert.is_true(tide.allclose(Q:sum(2), tide.ones(6, { dtype = DT })))
    end)

    it("trains 2 iterations with the queue and frozen prototypes as PyTorch", function()
        local model = SwAVResNet({ normalize = true, hidden_mlp = 8, output_dim = args.feat_dim,
            nmb_prototypes = 5 }):to(DT)
        fill_deterministic(model)
        -- optimizer = torch.optim.SGD(model.parameters(), lr=args.base_lr, momentum=0.9,
        --                             weight_decay=args.wd)
        local optimizer = optim.SGD(model:parameters(), { lr = args.base_lr, momentum = 0.9,
            weight_decay = args.wd })
        -- GAP: optimizer = LARC(optimizer=optimizer, trust_coefficient=0.001, clip=False) is
        -- apex's (not ported: plain SGD on both sides)
        local train_loader = { crops(0), crops(1) }
        -- warmup_lr_schedule = np.linspace(args.start_warmup, args.base_lr,
        --                                  len(train_loader) * args.warmup_epochs)
        local warmup_lr_schedule = tide.linspace(args.start_warmup, args.base_lr,
            #train_loader * args.warmup_epochs, { dtype = DT })
        -- iters = np.arange(len(train_loader) * (args.epochs - args.warmup_epochs))
        local n_cos = #train_loader * (args.epochs - args.warmup_epochs)
        -- cosine_lr_schedule = np.array([args.final_lr + 0.5 * (args.base_lr - args.final_lr) *
        --     (1 + math.cos(math.pi * t / (len(train_loader) *
        --                                  (args.epochs - args.warmup_epochs)))) for t in iters])
        local cos = {}
        for t = 0, n_cos - 1 do
            cos[#cos + 1] = args.final_lr + 0.5 * (args.base_lr - args.final_lr) *
                (1 + math.cos(math.pi * t / n_cos))
        end
        local cosine_lr_schedule = tide.tensor(cos, { dtype = DT })
        -- lr_schedule = np.concatenate((warmup_lr_schedule, cosine_lr_schedule))
        local lr_schedule = tide.cat({ warmup_lr_schedule, cosine_lr_schedule })
        assert_rel({ 0, 0.3, 0.3, 0.1503 }, flat(lr_schedule), 1e-12, 1e-15, "lr_schedule")
        -- the queue needs to be divisible by the batch size
        -- args.queue_length -= args.queue_length % (args.batch_size * args.world_size)
        args.queue_length = args.queue_length
            - args.queue_length % (args.batch_size * args.world_size)
        -- queue = torch.zeros(len(args.crops_for_assign), args.queue_length // args.world_size,
        --                     args.feat_dim).cuda()
        local queue = tide.zeros(#args.crops_for_assign,
            math.floor(args.queue_length / args.world_size),
            args.feat_dim, { dtype = DT })
        local proto0 = F.normalize(model.prototypes.weight:detach(), { dim = 2 })
        local record = {}
        local losses
        losses, queue = train(train_loader, model, optimizer, 0, lr_schedule, queue, record)
        assert_finite(losses[1], "loss 1")
        assert_finite(losses[2], "loss 2")
        -- PyTorch 1.13: the same two iterations
        assert_rel({ 3.632398057413476, 2.9338187609925157 }, losses, 1e-9, 0, "losses")
        -- the queue is empty at the first iteration, full (and used) at the second
        assert.are.same({ false, true }, record.used)
        assert.are.same({ 6, 5 }, record[3].shape)
        assert_rel({ 0.209926285352, 0.207448540867, 0.197532635248, 0.195413803689,
            0.189678734843, 0.240760550242, 0.139410858141, 0.247505525735, 0.12242149396,
            0.249901571921, 0.223019856246, 0.18203060413, 0.216305328416, 0.167440826805,
            0.211203384403, 0.197781955372, 0.229116809787, 0.181251651494, 0.220401666287,
            0.171447917059, 0.245967160258, 0.123065897205, 0.25933397975, 0.105901453746,
            0.265731509041, 0.229024111798, 0.169127335235, 0.225782667633, 0.153578079646,
            0.222487805688 }, flat(record[3]), 1e-8, 1e-12, "q (iteration 2, crop 0)")
        -- the queue holds crop 1's embeddings of the second batch (first 2 features shown)
        assert_rel({ -0.0313795674351, -0.00367626387058, -0.0341481920096, 0.00120801836041,
            -0.0278291681838, -0.0027737475609, -0.0374187430841, 0.00400303558392,
            -0.0380170163825, -0.000908692381243, -0.0225309929019, -0.00292883807462 },
            flat(queue[{ 2, {}, { 1, 2 } }]), 1e-8, 1e-12, "queue")
        -- the prototypes, normalised as the next iteration would: frozen at iteration 0, then
        -- moved by SGD
        local w = F.normalize(model.prototypes.weight:detach():clone(), { dim = 2, p = 2 })
        assert_rel({ -0.201809143121, -0.393861710472, -0.3667784763, -0.559789447166,
            -0.312262474426, -0.470286726796, -0.0485305194933, -0.187677055825, 0.231906299403,
            0.27509296233, 0.511675232163, 0.303466025715, 0.562283507038, 0.121047444461,
            0.382712139899, -0.198384349882, -0.117703767111, -0.256300116487, -0.429468022775,
            -0.428014022817, -0.528529610049, -0.359466411073, -0.371428631542, -0.0793625192735,
            0.0639476664106, 0.140130150255, 0.429998603306, 0.285116268391, 0.609714775296,
            0.228911831123, 0.534331963834, -0.0205126884338, -0.039383801176, 0.0281547545595,
            -0.377643100149, 0.0271997570279, -0.596192550181, 0.116993292285, -0.631573833301,
            0.293740691574 }, flat(w), 1e-8, 1e-12, "normalised prototypes")
        assert.is_true((w - proto0):abs():max():item() > 1e-3)
        assert.is_true(tide.allclose(w:norm({ dim = 2 }), tide.ones(5, { dtype = DT })))
    end)
end)
