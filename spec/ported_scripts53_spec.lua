-- ported_scripts53_spec.lua — TorchScript tutorials ported line for line (tide.jit as a user meets it): Intro_to_TorchScript_tutorial.py (MyCell, MyDecisionGate, trace, .graph/.code, script, the scripted RNN loop, mixing, save/load), tuning_guide.py's CPU parts and torchscript_inference's snippets, super_resolution_with_onnxruntime.py's model and its export line, and basics/saveloadrun_tutorial.py.
-- Each port keeps the script's calls (a Python keyword is a name in a trailing table), tiny
-- sizes and random data; the Python line stands above each Lua line that differs from it. tide
-- runs eagerly: script/trace give the module back, with .code/.graph strings saying tide keeps
-- no TorchScript and .save (tide.save) as a ScriptModule's.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite

local function tmpfile(name)
    return os.tmpname() .. "_" .. name
end

---------------------------------------------------------------------------------------------
-- 1. beginner_source/Intro_to_TorchScript_tutorial.py
---------------------------------------------------------------------------------------------
describe("Intro_to_TorchScript_tutorial.py", function()
    it("MyCell, MyDecisionGate, jit.trace, .graph/.code, jit.script, the RNN loop, save/load", function()
        tide.manual_seed(0)
        -- class MyCell(torch.nn.Module): (the version with a Linear)
        local MyCell = nn.Module:extend("MyCell53")
        function MyCell:init()
            self.linear = nn.Linear(4, 4)
        end

        function MyCell:forward(x, h)
            local new_h = tide.tanh(self.linear(x) + h)
            return new_h, new_h
        end

        local my_cell = MyCell()
        -- x, h = torch.rand(3, 4), torch.rand(3, 4)
        local x, h = tide.rand(3, 4), tide.rand(3, 4)
        -- traced_cell = torch.jit.trace(my_cell, (x, h))
        local traced_cell = tide.jit.trace(my_cell, { x, h })
        assert.is_true(tostring(traced_cell):find("MyCell53") ~= nil)
        traced_cell(x, h)
        -- print(traced_cell.graph); print(traced_cell.code): tide keeps no IR, and says so
        -- (a string, not nil, so the tutorial's prints print something true)
        assert.is_truthy(traced_cell.graph:find("no TorchScript graph", 1, true))
        assert.is_truthy(traced_cell.code:find("MyCell53 was traced", 1, true))
        -- print(my_cell(x, h)); print(traced_cell(x, h)): the same values
        local a = my_cell(x, h)
        local b = traced_cell(x, h)
        assert.is_true(tide.equal(a, b))

        -- class MyDecisionGate(torch.nn.Module):
        local MyDecisionGate = nn.Module:extend("MyDecisionGate53")
        function MyDecisionGate:forward(x) -- luacheck: ignore
            -- if x.sum() > 0:
            if x:sum():item() > 0 then
                return x
            else
                return -x
            end
        end

        -- class MyCell(torch.nn.Module): def __init__(self, dg):
        local MyCell2 = nn.Module:extend("MyCell53b")
        function MyCell2:init(dg)
            self.dg = dg
            self.linear = nn.Linear(4, 4)
        end

        function MyCell2:forward(x, h) -- luacheck: ignore
            local new_h = tide.tanh(self.dg(self.linear(x)) + h)
            return new_h, new_h
        end

        my_cell = MyCell2(MyDecisionGate())
        traced_cell = tide.jit.trace(my_cell, { x, h })
        -- print(traced_cell.dg.code): each submodule has its own
        assert.is_truthy(traced_cell.dg.code:find("MyDecisionGate53", 1, true))
        -- scripted_gate = torch.jit.script(MyDecisionGate())
        local scripted_gate = tide.jit.script(MyDecisionGate())
        my_cell = MyCell2(scripted_gate)
        local scripted_cell = tide.jit.script(my_cell)
        assert.is_truthy(scripted_gate.code:find("was scripted", 1, true))
        assert.is_truthy(scripted_cell.code:find("MyCell53b was scripted", 1, true))
        -- the control flow is kept (tide runs the Lua forward): a negative sum flips the sign
        local neg = -tide.ones(2, 4)
        assert.is_true(tide.equal(scripted_gate(neg), tide.ones(2, 4)))
        -- x, h = torch.rand(3, 4), torch.rand(3, 4); traced_cell(x, h)
        x, h = tide.rand(3, 4), tide.rand(3, 4)
        traced_cell(x, h)

        -- class MyRNNLoop(torch.nn.Module):
        local MyRNNLoop = nn.Module:extend("MyRNNLoop53")
        function MyRNNLoop:init()
            -- self.cell = torch.jit.trace(MyCell(scripted_gate), (x, h))
            self.cell = tide.jit.trace(MyCell2(scripted_gate), { x, h })
        end

        function MyRNNLoop:forward(xs)
            -- h, y = torch.zeros(3, 4), torch.zeros(3, 4)
            local h, y = tide.zeros(3, 4), tide.zeros(3, 4) -- luacheck: ignore
            -- for i in range(xs.size(0)): y, h = self.cell(xs[i], h)
            for i = 1, xs:size(1) do
                y, h = self.cell(xs[i], h)
            end
            return y, h
        end

        -- rnn_loop = torch.jit.script(MyRNNLoop()); print(rnn_loop.code)
        local rnn_loop = tide.jit.script(MyRNNLoop())
        assert.is_string(rnn_loop.code)

        -- class WrapRNN(torch.nn.Module):
        local WrapRNN = nn.Module:extend("WrapRNN53")
        function WrapRNN:init()
            self.loop = tide.jit.script(MyRNNLoop())
        end

        function WrapRNN:forward(xs)
            local y, h = self.loop(xs) -- luacheck: ignore
            return tide.relu(y)
        end

        -- traced = torch.jit.trace(WrapRNN(), (torch.rand(10, 3, 4)))
        local traced = tide.jit.trace(WrapRNN(), tide.rand(10, 3, 4))
        assert.is_string(traced.code)
        local xs = tide.rand(10, 3, 4)
        local before = traced(xs)
        -- traced.save('wrapped_rnn.pt')  (a ScriptModule's save method: tide.save of the module)
        local path = tmpfile("wrapped_rnn.pt")
        traced:save(path)
        -- loaded = torch.jit.load('wrapped_rnn.pt'); print(loaded); print(loaded.code)
        local loaded = tide.jit.load(path)
        os.remove(path)
        assert.is_truthy(tostring(loaded):find("WrapRNN53", 1, true))
        assert.is_truthy(loaded.code:find("WrapRNN53 was traced", 1, true))
        assert.is_true(tide.allclose(loaded(xs), before))

        -- and the traced cell trains as the eager one does (tide's trace is the module)
        local opt = optim.SGD(traced:parameters(), { lr = 0.1 })
        local target = tide.rand(3, 4)
        local losses = {}
        for step = 1, 5 do
            opt:zero_grad()
            local loss = F.mse_loss(traced(xs), target)
            loss:backward()
            opt:step()
            losses[step] = loss:item()
        end
        assert_finite(losses)
        assert.is_true(losses[5] < losses[1])
    end)

    it("a ScriptModule field the module already has stays its own", function()
        local M = nn.Module:extend("HasCode53")
        function M:init()
            self.code = nn.Linear(2, 2) -- a submodule named code (a codebook layer, say)
        end

        function M:forward(x)
            return self.code(x)
        end

        local m = tide.jit.script(M())
        assert.is_true(m.code.__ismodule)
        assert.is_string(m.code.code)
        -- a scripted function is the function itself (Lua cannot give it fields)
        local fn = function(x) return x * 2 end
        assert.equals(fn, tide.jit.script(fn))
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. recipes_source/recipes/tuning_guide.py (CPU parts) and torchscript_inference's snippets
---------------------------------------------------------------------------------------------
describe("tuning_guide.py and torchscript_inference", function()
    it("set_to_none, no_grad, cudnn.benchmark, scripted gelu, checkpoint, channels_last, threads", function()
        tide.manual_seed(1)
        local model = nn.Sequential(nn.Conv2d(3, 8, 3, { bias = false }), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Flatten(), nn.Linear(8 * 6 * 6, 4))
        local optimizer = optim.SGD(model:parameters(), { lr = 0.05 })
        -- model.zero_grad(); optimizer.zero_grad()
        model:zero_grad()
        optimizer:zero_grad()
        -- for param in model.parameters(): param.grad = None
        for _, param in ipairs(model:parameters()) do
            param.grad = nil
        end
        -- optimizer.zero_grad(set_to_none=True)
        optimizer:zero_grad({ set_to_none = true })

        -- @torch.jit.script
        -- def fused_gelu(x): return x * 0.5 * (1.0 + torch.erf(x / 1.41421))
        local fused_gelu = tide.jit.script(function(x)
            return x * 0.5 * (1.0 + tide.erf(x / 1.41421))
        end)
        -- @torch.compile def gelu(x): (the newer guide's form)
        local gelu = tide.compile(function(x)
            return x * 0.5 * (1.0 + tide.erf(x / 1.41421))
        end)
        local t = tide.randn(5)
        assert.is_true(tide.allclose(fused_gelu(t), F.gelu(t), { atol = 1e-4 }))
        assert.is_true(tide.allclose(gelu(t), fused_gelu(t)))

        -- torch.backends.cudnn.benchmark = True; torch.set_float32_matmul_precision("high")
        tide.backends.cudnn.benchmark = true
        tide.set_float32_matmul_precision("high")
        -- torch.set_num_threads(n)
        local n = tide.get_num_threads()
        tide.set_num_threads(n)
        -- model = model.to(memory_format=torch.channels_last)
        model = model:to({ memory_format = tide.channels_last })
        local input = tide.randn(4, 3, 8, 8):to({ memory_format = tide.channels_last })
        local target = tide.randint(1, 5, { 4 })

        local losses = {}
        for step = 1, 5 do
            optimizer:zero_grad({ set_to_none = true })
            -- torch.utils.checkpoint.checkpoint(block, x): the conv block recomputed in backward
            local feats = tide.utils.checkpoint.checkpoint(function(x)
                return model[3](model[2](model[1](x)))
            end, input, { use_reentrant = false })
            local out = model[5](model[4](feats))
            local loss = F.cross_entropy(out, target)
            loss:backward()
            optimizer:step()
            losses[step] = loss:item()
        end
        assert_finite(losses)
        assert.is_true(losses[5] < losses[1])

        -- with torch.no_grad(): validation
        tide.no_grad(function()
            assert.is_false(model(input).requires_grad)
        end)
        tide.backends.cudnn.benchmark = false
        tide.set_float32_matmul_precision("highest")
    end)

    it("oneDNN Graph inference: trace, freeze, warm-up runs; torchscript_inference's save/load", function()
        tide.manual_seed(2)
        -- torch.jit.enable_onednn_fusion(True)
        tide.jit.enable_onednn_fusion(true)
        -- sample_input = [torch.rand(32, 3, 224, 224)] (small)
        local sample_input = { tide.rand(2, 3, 8, 8) }
        -- model = getattr(torchvision.models, "resnet50")().eval() (a small conv net)
        local model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(4, 3)):eval()
        -- traced_model = torch.jit.trace(model, sample_input)
        local traced_model = tide.jit.trace(model, sample_input)
        -- traced_model = torch.jit.freeze(traced_model)
        traced_model = tide.jit.freeze(traced_model)
        local out
        -- with torch.no_grad(): traced_model(*sample_input) (three times)
        tide.no_grad(function()
            traced_model(table.unpack and table.unpack(sample_input) or unpack(sample_input)) -- luacheck: ignore
            traced_model(sample_input[1])
            out = traced_model(sample_input[1])
        end)
        assert.same({ 2, 3 }, { out:size(1), out:size(2) })

        -- torchscript_inference: scripted = torch.jit.script(model); scripted.save('model.pt')
        local scripted = tide.jit.script(model)
        local path = tmpfile("model.pt")
        scripted:save(path)
        -- model = torch.jit.load('model.pt'); model.eval(); model(input)
        local loaded = tide.jit.load(path)
        os.remove(path)
        loaded:eval()
        tide.no_grad(function()
            assert.is_true(tide.allclose(loaded(sample_input[1]), out))
        end)
        -- torch.jit.save(torch.jit.script(model), 'model.pt'); torch.jit.load(..., map_location='cpu')
        path = tmpfile("model2.pt")
        tide.jit.save(tide.jit.script(model), path)
        loaded = tide.jit.load(path, "cpu")
        os.remove(path)
        assert.is_string(loaded.graph)
    end)

    it("torch.utils.checkpoint is a module: checkpoint and checkpoint_sequential by name", function()
        local seq = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 3), nn.Tanh())
        local x = tide.randn(2, 3, { requires_grad = true })
        -- torch.utils.checkpoint.checkpoint_sequential(seq, 2, x)
        local y = tide.utils.checkpoint.checkpoint_sequential(seq, 2, x)
        assert.is_true(tide.allclose(y, seq(x)))
        -- tide's short form stays: tide.utils.checkpoint(fn, x)
        local z = tide.utils.checkpoint(function(a) return a * 3 end, x)
        z:sum():backward()
        assert.is_true(tide.allclose(x.grad, tide.full({ 2, 3 }, 3, { dtype = "float32" })))
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. super_resolution_with_onnxruntime.py and basics/saveloadrun_tutorial.py
---------------------------------------------------------------------------------------------
describe("super_resolution_with_onnxruntime.py", function()
    it("SuperResolutionNet, orthogonal init, eval, trace; torch.onnx.export raises naming tide.save", function()
        tide.manual_seed(3)
        local init = nn.init
        -- class SuperResolutionNet(nn.Module): def __init__(self, upscale_factor, inplace=False):
        local SuperResolutionNet = nn.Module:extend("SuperResolutionNet53")
        function SuperResolutionNet:init(upscale_factor, inplace)
            self.relu = nn.ReLU({ inplace = inplace or false })
            -- nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2)) (channels shrunk)
            self.conv1 = nn.Conv2d(1, 8, { 5, 5 }, { 1, 1 }, { 2, 2 })
            self.conv2 = nn.Conv2d(8, 8, { 3, 3 }, { 1, 1 }, { 1, 1 })
            self.conv3 = nn.Conv2d(8, 4, { 3, 3 }, { 1, 1 }, { 1, 1 })
            self.conv4 = nn.Conv2d(4, upscale_factor ^ 2, { 3, 3 }, { 1, 1 }, { 1, 1 })
            self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
            self:_initialize_weights()
        end

        function SuperResolutionNet:forward(x)
            x = self.relu(self.conv1(x))
            x = self.relu(self.conv2(x))
            x = self.relu(self.conv3(x))
            x = self.pixel_shuffle(self.conv4(x))
            return x
        end

        function SuperResolutionNet:_initialize_weights()
            init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
            init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
            init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
            init.orthogonal_(self.conv4.weight)
        end

        -- torch_model = SuperResolutionNet(upscale_factor=3)
        local torch_model = SuperResolutionNet(3)
        -- (train a few steps on tiny random data instead of loading the pretrained weights)
        local x = tide.rand(2, 1, 6, 6)
        local target = tide.rand(2, 1, 18, 18)
        local opt = optim.Adam(torch_model:parameters(), { lr = 1e-2 })
        local losses = {}
        for step = 1, 5 do
            opt:zero_grad()
            local loss = F.mse_loss(torch_model(x), target)
            loss:backward()
            opt:step()
            losses[step] = loss:item()
        end
        assert_finite(losses)
        assert.is_true(losses[5] < losses[1])
        -- torch_model.eval()
        torch_model:eval()
        -- x = torch.randn(batch_size, 1, 224, 224, requires_grad=True); torch_out = torch_model(x)
        x = tide.randn(2, 1, 6, 6, { requires_grad = true })
        local torch_out = torch_model(x)
        assert.same({ 2, 1, 18, 18 }, { torch_out:size(1), torch_out:size(2), torch_out:size(3), torch_out:size(4) })
        -- torch.onnx.export(torch_model, x, "super_resolution.onnx", export_params=True, ...)
        -- (tide.onnx: `require("tide.onnx")` until tide's lazy fields name it as tide.onnx)
        local onnx = tide.onnx or require("tide.onnx")
        local ok, err = pcall(onnx.export, torch_model, x, "super_resolution.onnx", {
            export_params = true, opset_version = 10, do_constant_folding = true,
            input_names = { 'input' }, output_names = { 'output' },
            dynamic_axes = { input = { [0] = 'batch_size' }, output = { [0] = 'batch_size' } } })
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("tide: onnx.export: tide cannot write ONNX", 1, true))
        assert.is_truthy(tostring(err):find("SuperResolutionNet53", 1, true))
        assert.is_false(onnx.is_in_onnx_export())
        -- the export path tide has: torch.jit.trace then save
        local traced = tide.jit.trace(torch_model, x)
        local path = tmpfile("super_resolution.pt")
        tide.jit.save(traced, path)
        local loaded = tide.jit.load(path)
        os.remove(path)
        assert.is_true(tide.allclose(loaded(x), torch_out))
    end)
end)

describe("basics/saveloadrun_tutorial.py", function()
    it("state_dict save/load, the whole model, and onnx.export", function()
        tide.manual_seed(4)
        -- model = models.vgg16(pretrained=True) (a small VGG-like net)
        local function vgg()
            return nn.Sequential(nn.Conv2d(3, 4, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2),
                nn.Flatten(), nn.Dropout(), nn.Linear(4 * 4 * 4, 5))
        end
        local model = vgg()
        -- torch.save(model.state_dict(), 'model_weights.pth')
        local wpath = tmpfile("model_weights.pth")
        tide.save(model:state_dict(), wpath)
        local input = tide.rand(2, 3, 8, 8)
        model:eval()
        local want = model(input)
        -- model = models.vgg16(); model.load_state_dict(torch.load('model_weights.pth')); model.eval()
        model = vgg()
        model:load_state_dict(tide.load(wpath))
        model:eval()
        os.remove(wpath)
        assert.is_true(tide.allclose(model(input), want))
        -- torch.save(model, 'model.pth'); model = torch.load('model.pth')
        local mpath = tmpfile("model.pth")
        tide.save(model, mpath)
        model = tide.load(mpath)
        os.remove(mpath)
        assert.is_true(tide.allclose(model(input), want))
        -- input_image = torch.zeros((1,3,224,224)); onnx.export(model, input_image, 'model.onnx')
        local input_image = tide.zeros({ 1, 3, 8, 8 })
        local onnx = require("tide.onnx")
        assert.has_error(function() onnx.export(model, input_image, 'model.onnx') end)
    end)
end)
