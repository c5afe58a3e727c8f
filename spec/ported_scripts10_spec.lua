-- ported_scripts10_spec.lua — PyTorch tutorials ported line for line: the Knowledge
-- Distillation Tutorial (beginner_source/knowledge_distillation_tutorial.py: DeepNN/LightNN,
-- train/test, train_knowledge_distillation, the cosine-loss and regressor variants), the Pruning
-- Tutorial (intermediate_source/pruning_tutorial.py: LeNet, random/l1/ln pruning, the
-- PruningContainer in module._forward_pre_hooks, remove, global_unstructured with
-- prune.L1Unstructured, a custom BasePruningMethod), and the torch.func tutorials
-- Per-sample-gradients and Model ensembling (intermediate_source/per_sample_grads.py,
-- ensembling.py: functional_call, grad, vmap, stack_module_state). Shrunk to tiny sizes and
-- random data; values checked against PyTorch 1.13 (functorch for torch.func) where noted. The
-- Python line stands above each Lua line that differs from it. Dims, indices and class targets
-- are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local is_finite = ported.is_finite

local function near(a, b, tol, what)
    assert(math.abs(a - b) <= (tol or 1e-5), (what or "value") .. ": " .. tostring(a) ..
        " vs " .. tostring(b))
end

local function near_list(t, want, tol, what)
    local got = t:totable()
    assert.are.equal(#want, #got, what)
    for i = 1, #want do
        near(got[i], want[i], tol, (what or "value") .. "[" .. i .. "]")
    end
end

-- the error's text without its position
local function message(f)
    local ok, err = pcall(f)
    assert.is_false(ok, "expected an error")
    return (tostring(err):gsub("^[^:]*:%d+: ", ""))
end

local isinstance = tide.isinstance

---------------------------------------------------------------------------------------------
-- 1. beginner_source/knowledge_distillation_tutorial.py
---------------------------------------------------------------------------------------------
describe("knowledge_distillation_tutorial.py", function()
    -- CIFAR-10 shrunk: 16 random 3x32x32 images, 10 classes; the teacher's last conv has twice
    -- the student's channels (32 and 16 there, 8 and 4 here) so avg_pool1d(..., 2) matches them
    local function loaders()
        local images = tide.randn(16, 3, 32, 32)
        local labels = tide.randint(1, 11, { 16 })
        local ds = tide.data.TensorDataset(images, labels)
        -- train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=128, shuffle=True, num_workers=2)
        local train_loader = tide.data.DataLoader(ds, { batch_size = 8, shuffle = true })
        local test_loader = tide.data.DataLoader(ds, { batch_size = 8, shuffle = false })
        return train_loader, test_loader
    end
    -- device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    local device = tide.device("cpu")

    -- class DeepNN(nn.Module):
    local DeepNN = nn.Module:extend("DeepNN")
    -- def __init__(self, num_classes=10):
    function DeepNN:init(num_classes)
        num_classes = num_classes or 10
        self.features = nn.Sequential(
            -- nn.Conv2d(3, 128, kernel_size=3, padding=1),
            nn.Conv2d(3, 16, { kernel_size = 3, padding = 1 }),
            nn.ReLU(),
            nn.Conv2d(16, 8, { kernel_size = 3, padding = 1 }),
            nn.ReLU(),
            -- nn.MaxPool2d(kernel_size=2, stride=2),
            nn.MaxPool2d({ kernel_size = 2, stride = 2 }),
            nn.Conv2d(8, 8, { kernel_size = 3, padding = 1 }),
            nn.ReLU(),
            nn.Conv2d(8, 8, { kernel_size = 3, padding = 1 }),
            nn.ReLU(),
            nn.MaxPool2d({ kernel_size = 2, stride = 2 })
        )
        self.classifier = nn.Sequential(
            -- nn.Linear(2048, 512),
            nn.Linear(512, 32),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(32, num_classes)
        )
    end

    function DeepNN:forward(x)
        x = self.features(x)
        -- x = torch.flatten(x, 1)
        x = tide.flatten(x, 2)
        x = self.classifier(x)
        return x
    end

    -- class LightNN(nn.Module):
    local LightNN = nn.Module:extend("LightNN")
    function LightNN:init(num_classes)
        num_classes = num_classes or 10
        self.features = nn.Sequential(
            nn.Conv2d(3, 4, { kernel_size = 3, padding = 1 }),
            nn.ReLU(),
            nn.MaxPool2d({ kernel_size = 2, stride = 2 }),
            nn.Conv2d(4, 4, { kernel_size = 3, padding = 1 }),
            nn.ReLU(),
            nn.MaxPool2d({ kernel_size = 2, stride = 2 })
        )
        self.classifier = nn.Sequential(
            -- nn.Linear(1024, 256),
            nn.Linear(256, 16),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(16, num_classes)
        )
    end

    function LightNN:forward(x)
        x = self.features(x)
        x = tide.flatten(x, 2)
        x = self.classifier(x)
        return x
    end

    -- def train(model, train_loader, epochs, learning_rate, device):
    local function train(model, train_loader, epochs, learning_rate, device_)
        local criterion = nn.CrossEntropyLoss()
        -- optimizer = optim.Adam(model.parameters(), lr=learning_rate)
        local optimizer = optim.Adam(model:parameters(), { lr = learning_rate })

        model:to(device_)
        model:train()

        local epoch_losses = {}
        -- for epoch in range(epochs):
        for epoch = 1, epochs do
            local running_loss = 0.0
            -- for inputs, labels in train_loader:
            for inputs, labels in train_loader:iter() do
                -- inputs, labels = inputs.to(device), labels.to(device)
                inputs, labels = inputs:to(device_), labels:to(device_)

                optimizer:zero_grad()
                local outputs = model(inputs)

                local loss = criterion(outputs, labels)
                loss:backward()
                optimizer:step()

                -- running_loss += loss.item()
                running_loss = running_loss + loss:item()
            end
            -- print(f"Epoch {epoch+1}/{epochs}, Loss: {running_loss / len(train_loader)}")
            local line = string.format("Epoch %d/%d, Loss: %s", epoch, epochs,
                running_loss / train_loader:len())
            assert.is_truthy(line:find("^Epoch %d+/%d+, Loss: "))
            epoch_losses[epoch] = running_loss / train_loader:len()
        end
        return epoch_losses
    end

    -- def test(model, test_loader, device):
    local function test(model, test_loader, device_, multiple_outputs)
        model:to(device_)
        model:eval()

        local correct = 0
        local total = 0

        -- with torch.no_grad():
        tide.no_grad(function()
            for inputs, labels in test_loader:iter() do
                inputs, labels = inputs:to(device_), labels:to(device_)

                local outputs
                if multiple_outputs then
                    -- outputs, _ = model(inputs) # In this line we disregard the second tensor of the tuple
                    outputs = model(inputs)
                else
                    outputs = model(inputs)
                end
                -- _, predicted = torch.max(outputs.data, 1)
                local _, predicted = tide.max(outputs.data, 2)

                -- total += labels.size(0)
                total = total + labels:size(1)
                -- correct += (predicted == labels).sum().item()
                correct = correct + predicted:eq(labels):sum():item()
            end
        end)

        local accuracy = 100 * correct / total
        -- print(f"Test Accuracy: {accuracy:.2f}%")
        assert.is_truthy(string.format("Test Accuracy: %.2f%%", accuracy):find("%%$"))
        return accuracy
    end

    it("the soft-targets loss and the weighted sum: PyTorch's values", function()
        -- teacher and student logits of 2 samples, 3 classes; T = 2
        local teacher_logits = tide.tensor({ { 1.0, 2.0, 0.5 }, { 0.2, -1.0, 3.0 } })
        local student_logits = tide.tensor({ { 0.5, 1.5, 1.0 }, { 1.0, 0.0, 2.0 } })
        local labels = tide.tensor({ 2, 3 }) -- PyTorch's [1, 2]
        local T = 2
        -- soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
        local soft_targets = nn.functional.softmax(teacher_logits / T, { dim = -1 })
        -- soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)
        local soft_prob = nn.functional.log_softmax(student_logits / T, { dim = -1 })
        -- soft_targets_loss = torch.sum(soft_targets * (soft_targets.log() - soft_prob)) / soft_prob.size()[0] * (T**2)
        local soft_targets_loss = tide.sum(soft_targets * (soft_targets:log() - soft_prob)) /
            soft_prob:size()[1] * (T ^ 2)
        local label_loss = nn.CrossEntropyLoss()(student_logits, labels)
        local loss = 0.25 * soft_targets_loss + 0.75 * label_loss
        near(soft_targets_loss:item(), 0.24429279565811157, 1e-6, "soft_targets_loss")
        near(label_loss:item(), 0.5439378023147583, 1e-6, "label_loss")
        near(loss:item(), 0.4690265655517578, 1e-6, "loss")
        -- the same as KL divergence with batchmean, times T**2
        local kl = F.kl_div(soft_prob, soft_targets, { reduction = "batchmean" }) * (T ^ 2)
        near(kl:item(), soft_targets_loss:item(), 1e-6, "kl_div")
    end)

    it("teacher, student, and train_knowledge_distillation (teacher.eval() under no_grad)",
        function()
            -- (the data and the shuffle order seeded too, so earlier files' draws do not change
            -- them)
            tide.manual_seed(7)
            local train_loader, test_loader = loaders()
            -- torch.manual_seed(42)
            tide.manual_seed(42)
            -- nn_deep = DeepNN(num_classes=10)
            local nn_deep = DeepNN(10)
            local deep_losses = train(nn_deep, train_loader, 2, 0.001, device)
            assert.is_true(is_finite(deep_losses[2]))
            local test_accuracy_deep = test(nn_deep, test_loader, device)
            assert.is_true(test_accuracy_deep >= 0 and test_accuracy_deep <= 100)

            -- torch.manual_seed(42); nn_light = LightNN(num_classes=10)
            tide.manual_seed(42)
            local nn_light = LightNN(10)
            tide.manual_seed(42)
            local new_nn_light = LightNN(10)
            -- print("Norm of 1st layer of nn_light:", torch.norm(nn_light.features[0].weight).item())
            local n1 = tide.norm(nn_light.features[1].weight):item()
            local n2 = tide.norm(new_nn_light.features[1].weight):item()
            assert.are.equal(n1, n2) -- the same initialization under the same seed

            -- total_params_deep = "{:,}".format(sum(p.numel() for p in nn_deep.parameters()))
            local total_params_deep = 0
            for _, p in ipairs(nn_deep:parameters()) do
                total_params_deep = total_params_deep + p:numel()
            end
            local total_params_light = 0
            for _, p in ipairs(nn_light:parameters()) do
                total_params_light = total_params_light + p:numel()
            end
            assert.are.equal(448 + 1160 + 584 + 584 + 16416 + 330, total_params_deep)
            assert.are.equal(112 + 148 + 4112 + 170, total_params_light)

            train(nn_light, train_loader, 1, 0.001, device)

            -- def train_knowledge_distillation(teacher, student, train_loader, epochs, learning_rate, T, soft_target_loss_weight, ce_loss_weight, device):
            local function train_knowledge_distillation(teacher, student, train_loader_, epochs,
                                                        learning_rate, T, soft_target_loss_weight,
                                                        ce_loss_weight, device_)
                local ce_loss = nn.CrossEntropyLoss()
                local optimizer = optim.Adam(student:parameters(), { lr = learning_rate })

                teacher:to(device_)
                student:to(device_)
                teacher:eval() -- Teacher set to evaluation mode
                student:train() -- Student to train mode

                local losses = {}
                for _ = 1, epochs do
                    for inputs, labels in train_loader_:iter() do
                        inputs, labels = inputs:to(device_), labels:to(device_)

                        optimizer:zero_grad()

                        -- with torch.no_grad():
                        --     teacher_logits = teacher(inputs)
                        local teacher_logits = tide.no_grad(function()
                            return teacher(inputs)
                        end)
                        assert.is_false(teacher_logits.requires_grad)

                        local student_logits = student(inputs)

                        local soft_targets = nn.functional.softmax(teacher_logits / T,
                            { dim = -1 })
                        local soft_prob = nn.functional.log_softmax(student_logits / T,
                            { dim = -1 })

                        local soft_targets_loss = tide.sum(soft_targets *
                            (soft_targets:log() - soft_prob)) / soft_prob:size()[1] * (T ^ 2)

                        local label_loss = ce_loss(student_logits, labels)

                        local loss = soft_target_loss_weight * soft_targets_loss +
                            ce_loss_weight * label_loss

                        loss:backward()
                        optimizer:step()

                        losses[#losses + 1] = loss:item()
                    end
                end
                return losses
            end

            local teacher_w = nn_deep.features[1].weight:clone()
            -- train_knowledge_distillation(teacher=nn_deep, student=new_nn_light, train_loader=train_loader, epochs=10, learning_rate=0.001, T=2, soft_target_loss_weight=0.25, ce_loss_weight=0.75, device=device)
            local losses = train_knowledge_distillation(nn_deep, new_nn_light, train_loader, 3,
                0.001, 2, 0.25, 0.75, device)
            for _, l in ipairs(losses) do
                assert.is_true(is_finite(l))
            end
            assert.is_true(losses[#losses] < losses[1], "KD loss decreases: " ..
                losses[1] .. " -> " .. losses[#losses])
            -- the teacher is unchanged, and has no gradients
            assert.is_true(nn_deep.features[1].weight:equal(teacher_w))
            assert.is_false(nn_deep.training)
            local test_accuracy_light_ce_and_kd = test(new_nn_light, test_loader, device)
            assert.is_true(test_accuracy_light_ce_and_kd >= 0)
        end)

    it("the cosine-loss variant: avg_pool1d on the teacher, CosineEmbeddingLoss(target=ones)",
        function()
            -- the values first: avg_pool1d of a (N, L) tensor, then the loss, as PyTorch's
            local h = tide.tensor({ { 1.0, 0.0, 2.0, 1.0, 0.5, 0.5, 3.0, 1.0 },
                { 0.0, 1.0, 1.0, 1.0, -2.0, 0.0, 1.0, 3.0 } })
            local a = tide.tensor({ { 1.0, 2.0, 3.0, 4.0 }, { -1.0, 0.5, 2.0, 0.0 } })
            local hp = F.avg_pool1d(h, 2)
            assert.are.same({ { 0.5, 1.5, 0.5, 2.0 }, { 0.5, 1.0, -1.0, 2.0 } }, hp:totable())
            -- nn.CosineEmbeddingLoss()(a, hp, target=torch.ones(a.size(0)))
            near(nn.CosineEmbeddingLoss()(a, hp, { target = tide.ones(a:size(1)) }):item(),
                0.7178008556365967, 1e-6, "cosine loss")

            -- class ModifiedDeepNNCosine(nn.Module):
            local ModifiedDeepNNCosine = DeepNN:extend("ModifiedDeepNNCosine")
            function ModifiedDeepNNCosine:forward(x)
                x = self.features(x)
                -- flattened_conv_output = torch.flatten(x, 1)
                local flattened_conv_output = tide.flatten(x, 2)
                x = self.classifier(flattened_conv_output)
                -- flattened_conv_output_after_pooling = torch.nn.functional.avg_pool1d(flattened_conv_output, 2)
                local flattened_conv_output_after_pooling = tide.nn.functional.avg_pool1d(
                    flattened_conv_output, 2)
                -- return x, flattened_conv_output_after_pooling
                return x, flattened_conv_output_after_pooling
            end

            local ModifiedLightNNCosine = LightNN:extend("ModifiedLightNNCosine")
            function ModifiedLightNNCosine:forward(x)
                x = self.features(x)
                local flattened_conv_output = tide.flatten(x, 2)
                x = self.classifier(flattened_conv_output)
                return x, flattened_conv_output
            end

            local train_loader, test_loader = loaders()
            tide.manual_seed(42)
            local nn_deep = DeepNN(10)
            -- modified_nn_deep = ModifiedDeepNNCosine(num_classes=10)
            local modified_nn_deep = ModifiedDeepNNCosine(10)
            -- modified_nn_deep.load_state_dict(nn_deep.state_dict())
            modified_nn_deep:load_state_dict(nn_deep:state_dict())
            assert.are.equal(tide.norm(nn_deep.features[1].weight):item(),
                tide.norm(modified_nn_deep.features[1].weight):item())
            tide.manual_seed(42)
            local modified_light_nn = ModifiedLightNNCosine(10)

            -- def train_cosine_loss(teacher, student, train_loader, epochs, learning_rate, hidden_rep_loss_weight, ce_loss_weight, device):
            local function train_cosine_loss(teacher, student, train_loader_, epochs,
                                             learning_rate, hidden_rep_loss_weight,
                                             ce_loss_weight, device_)
                local ce_loss = nn.CrossEntropyLoss()
                local cosine_loss = nn.CosineEmbeddingLoss()
                local optimizer = optim.Adam(student:parameters(), { lr = learning_rate })

                teacher:to(device_)
                student:to(device_)
                teacher:eval()
                student:train()

                local losses = {}
                for _ = 1, epochs do
                    for inputs, labels in train_loader_:iter() do
                        inputs, labels = inputs:to(device_), labels:to(device_)
                        optimizer:zero_grad()

                        -- with torch.no_grad():
                        --     _, teacher_hidden_representation = teacher(inputs)
                        local _, teacher_hidden_representation = tide.no_grad(function()
                            return teacher(inputs)
                        end)

                        -- student_logits, student_hidden_representation = student(inputs)
                        local student_logits, student_hidden_representation = student(inputs)
                        assert.are.same(teacher_hidden_representation.shape,
                            student_hidden_representation.shape)

                        -- hidden_rep_loss = cosine_loss(student_hidden_representation, teacher_hidden_representation, target=torch.ones(inputs.size(0)).to(device))
                        local hidden_rep_loss = cosine_loss(student_hidden_representation,
                            teacher_hidden_representation,
                            { target = tide.ones(inputs:size(1)):to(device_) })

                        local label_loss = ce_loss(student_logits, labels)

                        local loss = hidden_rep_loss_weight * hidden_rep_loss +
                            ce_loss_weight * label_loss

                        loss:backward()
                        optimizer:step()
                        losses[#losses + 1] = loss:item()
                    end
                end
                return losses
            end

            local losses = train_cosine_loss(modified_nn_deep, modified_light_nn, train_loader, 3,
                0.001, 0.25, 0.75, device)
            for _, l in ipairs(losses) do
                assert.is_true(is_finite(l))
            end
            assert.is_true(losses[#losses] < losses[1], "cosine loss decreases: " ..
                losses[1] .. " -> " .. losses[#losses])
            -- test_accuracy_light_ce_and_cosine_loss = test_multiple_outputs(modified_light_nn, test_loader, device)
            local acc = test(modified_light_nn, test_loader, device, true)
            assert.is_true(acc >= 0 and acc <= 100)
        end)

    it("the regressor variant: a Conv2d regressor, MSELoss on the feature maps", function()
        -- class ModifiedDeepNNRegressor(nn.Module):
        local ModifiedDeepNNRegressor = DeepNN:extend("ModifiedDeepNNRegressor")
        function ModifiedDeepNNRegressor:forward(x)
            x = self.features(x)
            local conv_feature_map = x
            x = tide.flatten(x, 2)
            x = self.classifier(x)
            return x, conv_feature_map
        end

        -- class ModifiedLightNNRegressor(nn.Module):
        local ModifiedLightNNRegressor = nn.Module:extend("ModifiedLightNNRegressor")
        function ModifiedLightNNRegressor:init(num_classes)
            num_classes = num_classes or 10
            self.features = nn.Sequential(
                nn.Conv2d(3, 4, { kernel_size = 3, padding = 1 }),
                nn.ReLU(),
                nn.MaxPool2d({ kernel_size = 2, stride = 2 }),
                nn.Conv2d(4, 4, { kernel_size = 3, padding = 1 }),
                nn.ReLU(),
                nn.MaxPool2d({ kernel_size = 2, stride = 2 })
            )
            -- Include an extra regressor (in our case linear)
            self.regressor = nn.Sequential(
                -- nn.Conv2d(16, 32, kernel_size=3, padding=1)
                nn.Conv2d(4, 8, { kernel_size = 3, padding = 1 })
            )
            self.classifier = nn.Sequential(
                nn.Linear(256, 16),
                nn.ReLU(),
                nn.Dropout(0.1),
                nn.Linear(16, num_classes)
            )
        end

        function ModifiedLightNNRegressor:forward(x)
            x = self.features(x)
            local regressor_output = self.regressor(x)
            x = tide.flatten(x, 2)
            x = self.classifier(x)
            return x, regressor_output
        end

        local function train_mse_loss(teacher, student, train_loader_, epochs, learning_rate,
                                      feature_map_weight, ce_loss_weight, device_)
            local ce_loss = nn.CrossEntropyLoss()
            local mse_loss = nn.MSELoss()
            local optimizer = optim.Adam(student:parameters(), { lr = learning_rate })

            teacher:to(device_)
            student:to(device_)
            teacher:eval()
            student:train()

            local losses = {}
            for _ = 1, epochs do
                for inputs, labels in train_loader_:iter() do
                    inputs, labels = inputs:to(device_), labels:to(device_)
                    optimizer:zero_grad()

                    -- Again ignore teacher logits
                    local _, teacher_feature_map = tide.no_grad(function()
                        return teacher(inputs)
                    end)

                    local student_logits, regressor_feature_map = student(inputs)
                    assert.are.same({ inputs:size(1), 8, 8, 8 }, regressor_feature_map.shape)

                    -- hidden_rep_loss = mse_loss(regressor_feature_map, teacher_feature_map)
                    local hidden_rep_loss = mse_loss(regressor_feature_map, teacher_feature_map)

                    local label_loss = ce_loss(student_logits, labels)

                    local loss = feature_map_weight * hidden_rep_loss + ce_loss_weight * label_loss

                    loss:backward()
                    optimizer:step()
                    losses[#losses + 1] = loss:item()
                end
            end
            return losses
        end

        local train_loader, test_loader = loaders()
        tide.manual_seed(42)
        local nn_deep = DeepNN(10)
        train(nn_deep, train_loader, 1, 0.001, device)
        tide.manual_seed(42)
        local modified_light_nn_mse = ModifiedLightNNRegressor(10)
        local modified_nn_deep_reg = ModifiedDeepNNRegressor(10)
        modified_nn_deep_reg:load_state_dict(nn_deep:state_dict())

        -- train_mse_loss(teacher=modified_nn_deep_reg, student=modified_light_nn_mse, train_loader=train_loader, epochs=10, learning_rate=0.001, feature_map_weight=0.25, ce_loss_weight=0.75, device=device)
        local losses = train_mse_loss(modified_nn_deep_reg, modified_light_nn_mse, train_loader, 3,
            0.001, 0.25, 0.75, device)
        for _, l in ipairs(losses) do
            assert.is_true(is_finite(l))
        end
        assert.is_true(losses[#losses] < losses[1], "MSE variant decreases: " .. losses[1] ..
            " -> " .. losses[#losses])
        local acc = test(modified_light_nn_mse, test_loader, device, true)
        assert.is_true(acc >= 0 and acc <= 100)
        -- the module form of a loss takes its target by name, as Python's keyword
        local x, y = tide.randn(2, 3), tide.randn(2, 3)
        assert.are.equal(nn.MSELoss()(x, y):item(), nn.MSELoss()(x, { target = y }):item())
        assert.are.equal("tide: MSELoss: target given twice, as argument #2 and by name; " ..
            "pass it once", message(function() nn.MSELoss()(x, y, { target = y }) end))
        assert.are.equal("tide: CosineEmbeddingLoss: unknown argument \"y\"; its call takes " ..
            "input1, input2, target (by position, or the last of them by name)",
            message(function() nn.CosineEmbeddingLoss()(x, y, { y = tide.ones(2) }) end))
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. intermediate_source/pruning_tutorial.py
---------------------------------------------------------------------------------------------
describe("pruning_tutorial.py", function()
    -- import torch.nn.utils.prune as prune
    local prune = nn.utils.prune

    -- class LeNet(nn.Module):
    local LeNet = nn.Module:extend("LeNet")
    function LeNet:init()
        -- 1 input image channel, 6 output channels, 3x3 square conv kernel
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, 120) -- 5x5 image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
    end

    function LeNet:forward(x)
        -- x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv1(x)), { 2, 2 })
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        -- x = x.flatten(start_dim=1)
        x = x:flatten({ start_dim = 2 })
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x
    end

    -- names of a list of (name, tensor) pairs
    local function names(list)
        local out = {}
        for _, pair in ipairs(list) do
            out[#out + 1] = pair[1]
        end
        return out
    end

    it("inspect, prune conv1 (random, l1 on the bias, ln_structured), the container, remove",
        function()
            tide.manual_seed(0)
            local device = tide.device("cpu")
            -- model = LeNet().to(device=device)
            local model = LeNet():to({ device = device })

            -- module = model.conv1
            local module = model.conv1
            -- print(list(module.named_parameters()))
            assert.are.same({ "weight", "bias" }, names(module:named_parameters()))
            -- print(list(module.named_buffers()))
            assert.are.same({}, names(module:named_buffers()))

            -- fixed values (PyTorch's below were computed on the same)
            tide.no_grad(function()
                module.weight:copy_(tide.arange(54):to("float32"):sin():view(6, 1, 3, 3))
                module.bias:copy_(tide.tensor({ 0.3, -0.1, 0.05, -0.4, 0.2, 0.01 }))
            end)
            local w = module.weight

            -- prune.random_unstructured(module, name="weight", amount=0.3)
            prune.random_unstructured(module, { name = "weight", amount = 0.3 })
            -- print(list(module.named_parameters()))
            assert.are.same({ "bias", "weight_orig" }, names(module:named_parameters()))
            -- print(list(module.named_buffers()))
            assert.are.same({ "weight_mask" }, names(module:named_buffers()))
            assert.are.equal(w, module.weight_orig)
            -- print(module.weight): 30% of the 54 weights (16) zeroed
            assert.are.equal(16, tide.sum(module.weight_mask:eq(0)):item())
            assert.is_true(module.weight:equal(module.weight_orig * module.weight_mask))
            -- print(module._forward_pre_hooks): one hook, the method itself
            assert.are.equal(1, #module._forward_pre_hooks)
            local h = module._forward_pre_hooks[1]
            assert.is_true(isinstance(h, prune.RandomUnstructured))
            assert.is_true(isinstance(h, prune.BasePruningMethod))
            assert.are.equal("weight", h._tensor_name)
            assert.are.equal(0.3, h.amount)
            assert.are.equal("<tide.nn.utils.prune.RandomUnstructured object>", tostring(h))

            -- the rest on a deterministic mask: start again from the fixed weight
            prune.remove(module, "weight")
            tide.no_grad(function()
                module.weight:copy_(tide.arange(54):to("float32"):sin():view(6, 1, 3, 3))
            end)

            -- prune.l1_unstructured(module, name="bias", amount=3)
            prune.l1_unstructured(module, { name = "bias", amount = 3 })
            assert.are.same({ "weight", "bias_orig" }, names(module:named_parameters()))
            assert.are.same({ "bias_mask" }, names(module:named_buffers()))
            -- print(module.bias): PyTorch's mask [1, 0, 0, 1, 1, 0]
            assert.are.same({ 1, 0, 0, 1, 1, 0 }, module.bias_mask:totable())

            -- prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
            prune.ln_structured(module, { name = "weight", amount = 0.5, n = 2, dim = 1 })
            -- PyTorch keeps channels 0, 4, 5 (of 9 entries each)
            assert.are.same({ 9, 0, 0, 0, 9, 9 },
                module.weight_mask:view(6, -1):sum(2):totable())
            -- again, l1 on what is left: 30% of the 27 (8) more
            prune.l1_unstructured(module, "weight", 0.3)
            assert.are.equal(35, tide.sum(module.weight_mask:eq(0)):item())
            assert.are.same({ 0, 1, 1, 0, 1, 1, 0, 1, 1 },
                module.weight_mask:view(-1):narrow(1, 1, 9):totable())
            assert.are.same({ 1, 1, 0, 1, 1, 0, 1, 1, 1 },
                module.weight_mask:view(-1):narrow(1, 46, 9):totable())

            -- for hook in module._forward_pre_hooks.values():
            --     if hook._tensor_name == "weight":  # select out the correct hook
            --         break
            local hook
            for _, hk in ipairs(module._forward_pre_hooks) do
                hook = hk
                if hook._tensor_name == "weight" then -- select out the correct hook
                    break
                end
            end
            assert.is_true(isinstance(hook, prune.PruningContainer))
            -- print(list(hook))  # pruning history in the container
            local history = { unpack(hook) }
            assert.are.equal(2, #history)
            assert.is_true(isinstance(history[1], prune.LnStructured))
            assert.is_true(isinstance(history[2], prune.L1Unstructured))
            assert.are.equal(2, history[1].n)
            assert.are.equal(0.3, history[2].amount)
            assert.are.equal(hook[1], hook._pruning_methods[1])

            -- print(model.state_dict().keys())
            local keys = {}
            for name in model:state_dict() do
                keys[#keys + 1] = name
            end
            -- (PyTorch's order after the remove above: bias pruned first)
            assert.are.same({ "conv1.bias_orig", "conv1.weight_orig", "conv1.bias_mask",
                "conv1.weight_mask", "conv2.weight", "conv2.bias", "fc1.weight", "fc1.bias",
                "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias" }, keys)

            -- forward runs with the pruned weights
            local out = model(tide.randn(2, 1, 28, 28))
            assert.are.same({ 2, 10 }, out.shape)

            -- prune.remove(module, 'weight')
            local pruned = module.weight:clone()
            prune.remove(module, "weight")
            assert.are.same({ "bias_orig", "weight" }, names(module:named_parameters()))
            assert.are.same({ "bias_mask" }, names(module:named_buffers()))
            assert.is_true(module.weight:equal(pruned))
            assert.are.equal(1, #module._forward_pre_hooks) -- the bias's
        end)

    it("many parameters in a loop, global_unstructured with prune.L1Unstructured", function()
        -- new_model = LeNet()
        local new_model = LeNet()
        -- for name, module in new_model.named_modules():
        for _, pair in ipairs(new_model:named_modules()) do
            local module = pair[2]
            -- if isinstance(module, torch.nn.Conv2d):
            if isinstance(module, tide.nn.Conv2d) then
                -- prune.l1_unstructured(module, name='weight', amount=0.2)
                prune.l1_unstructured(module, { name = "weight", amount = 0.2 })
                -- elif isinstance(module, torch.nn.Linear):
            elseif isinstance(module, tide.nn.Linear) then
                prune.l1_unstructured(module, { name = "weight", amount = 0.4 })
            end
        end
        -- print(dict(new_model.named_buffers()).keys())  # to verify that all masks exist
        assert.are.same({ "conv1.weight_mask", "conv2.weight_mask", "fc1.weight_mask",
            "fc2.weight_mask", "fc3.weight_mask" }, names(new_model:named_buffers()))

        -- model = LeNet() (fixed weights, PyTorch's counts below)
        local model = LeNet()
        tide.no_grad(function()
            for i, p in ipairs(model:parameters()) do
                local k = i - 1
                p:copy_(tide.arange(p:numel()):to("float32"):mul(0.37 + k):sin():view_as(p) *
                    (1.0 / (k + 1)))
            end
        end)

        -- parameters_to_prune = ((model.conv1, 'weight'), ...)
        local parameters_to_prune = {
            { model.conv1, "weight" },
            { model.conv2, "weight" },
            { model.fc1, "weight" },
            { model.fc2, "weight" },
            { model.fc3, "weight" },
        }

        -- prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
        prune.global_unstructured(
            parameters_to_prune,
            { pruning_method = prune.L1Unstructured, amount = 0.2 }
        )

        -- "Sparsity in conv1.weight: {:.2f}%".format(100. * float(torch.sum(model.conv1.weight == 0)) / float(model.conv1.weight.nelement()))
        local function sparsity(w)
            return string.format("%.2f", 100. * tide.sum(w:eq(0)):item() / w:nelement())
        end
        assert.are.equal("7.41", sparsity(model.conv1.weight))
        assert.are.equal("11.46", sparsity(model.conv2.weight))
        assert.are.equal("18.57", sparsity(model.fc1.weight))
        assert.are.equal("26.38", sparsity(model.fc2.weight))
        assert.are.equal("34.64", sparsity(model.fc3.weight))
        -- "Global sparsity: {:.2f}%"
        local global = 100. * (
            tide.sum(model.conv1.weight:eq(0))
            + tide.sum(model.conv2.weight:eq(0))
            + tide.sum(model.fc1.weight:eq(0))
            + tide.sum(model.fc2.weight:eq(0))
            + tide.sum(model.fc3.weight:eq(0))
        ):item() / (
            model.conv1.weight:nelement()
            + model.conv2.weight:nelement()
            + model.fc1.weight:nelement()
            + model.fc2.weight:nelement()
            + model.fc3.weight:nelement()
        )
        assert.are.equal("20.00", string.format("%.2f", global))
        -- each hook is a CustomFromMask, as PyTorch's
        assert.is_true(isinstance(model.fc1._forward_pre_hooks[1], prune.CustomFromMask))
        -- a structured class is refused by name
        assert.are.equal("tide: global_unstructured: pruning_method LnStructured has " ..
            "PRUNING_TYPE structured; global pruning takes an unstructured method " ..
            "(prune.L1Unstructured, prune.RandomUnstructured, ...)",
            message(function()
                prune.global_unstructured({ { LeNet().fc3, "weight" } },
                    { pruning_method = prune.LnStructured, amount = 0.2 })
            end))
    end)

    it("a custom pruning method: FooBarPruningMethod(prune.BasePruningMethod)", function()
        -- class FooBarPruningMethod(prune.BasePruningMethod):
        local FooBarPruningMethod = prune.BasePruningMethod:extend("FooBarPruningMethod")
        -- PRUNING_TYPE = 'unstructured'
        FooBarPruningMethod.PRUNING_TYPE = "unstructured"

        -- def compute_mask(self, t, default_mask):
        function FooBarPruningMethod:compute_mask(t, default_mask) -- luacheck: ignore t
            local mask = default_mask:clone()
            -- mask.view(-1)[::2] = 0
            mask:view(-1)[{ { 1, -1, 2 } }] = 0
            return mask
        end

        -- def foobar_unstructured(module, name):
        local function foobar_unstructured(module, name)
            -- FooBarPruningMethod.apply(module, name)
            FooBarPruningMethod.apply(module, name)
            return module
        end

        -- model = LeNet()
        local model = LeNet()
        -- foobar_unstructured(model.fc3, name='bias')
        foobar_unstructured(model.fc3, "bias")
        -- print(model.fc3.bias_mask)
        assert.are.same({ 0, 1, 0, 1, 0, 1, 0, 1, 0, 1 }, model.fc3.bias_mask:totable())
        assert.is_true(model.fc3.bias:equal(model.fc3.bias_orig * model.fc3.bias_mask))

        -- PyTorch's values on a Linear(3, 7) bias, once and twice (the second on what is left)
        local m = nn.Linear(3, 7)
        FooBarPruningMethod:apply(m, "bias") -- the method form is the same call
        assert.are.same({ 0, 1, 0, 1, 0, 1, 0 }, m.bias_mask:totable())
        local method = FooBarPruningMethod.apply(m, "bias")
        assert.are.same({ 0, 0, 0, 1, 0, 0, 0 }, m.bias_mask:totable())
        assert.is_true(isinstance(method, prune.PruningContainer))
        assert.are.equal(2, #method)
        -- prune() and remove() of the base class
        local t = tide.ones(5)
        assert.are.same({ 0, 1, 0, 1, 0 }, FooBarPruningMethod():prune(t):totable())
        method:remove(m)
        assert.are.same({ "weight", "bias" }, names(m:named_parameters()))
        assert.is_false(prune.is_pruned(m))
        -- a method without compute_mask, and one whose mask has another shape, raise
        local Bad = prune.BasePruningMethod:extend("Bad")
        Bad.PRUNING_TYPE = "unstructured"
        assert.are.equal("tide: Bad: compute_mask is not defined; define " ..
            "Bad:compute_mask(t, default_mask), returning the mask",
            message(function() Bad.apply(nn.Linear(2, 2), "bias") end))
        function Bad:compute_mask() return tide.ones(3) end -- luacheck: ignore
        local lin = nn.Linear(2, 2)
        assert.are.equal("tide: Bad.apply: compute_mask returned a mask of shape {3} for a " ..
            "tensor of shape {2}; return one of its shape",
            message(function() Bad.apply(lin, "bias") end))
        assert.is_false(prune.is_pruned(lin)) -- nothing changed
        assert.are.same({ "weight", "bias" }, names(lin:named_parameters()))
        -- a class of tide's applied by its apply, with an argument by name
        local c = nn.Linear(4, 4)
        prune.L1Unstructured.apply(c, "weight", { amount = 5 })
        assert.are.equal(5, tide.sum(c.weight_mask:eq(0)):item())
    end)
end)

describe("pruning_tutorial.py: the forms it needed", function()
    local prune = nn.utils.prune

    it("prune's functions by name, the classes, and module._forward_pre_hooks", function()
        -- positional then by name, as Python's keywords
        local c = nn.Conv2d(2, 4, 3)
        prune.ln_structured(c, "weight", 0.5, { n = 2, dim = 1 })
        assert.are.same({ 0, 0, 18, 18 }, (function()
            local per = c.weight_mask:view(4, -1):sum(2):totable()
            table.sort(per)
            return per
        end)())
        local l = nn.Linear(2, 2)
        prune.custom_from_mask(l, { name = "bias", mask = tide.tensor({ 1, 0 }) })
        assert.are.same({ 1, 0 }, l.bias_mask:totable())
        prune.remove(l, { name = "bias" })
        assert.is_false(prune.is_pruned(l))
        assert.are.equal("tide: l1_unstructured: unknown option \"foo\"; options are name, " ..
            "amount, importance_scores", message(function()
                prune.l1_unstructured(l, { name = "weight", amount = 0.2, foo = 1 })
            end))
        assert.are.equal("tide: l1_unstructured: amount given twice, as argument #3 and by " ..
            "name; pass it once", message(function()
                prune.l1_unstructured(l, "weight", 0.1, { amount = 0.2 })
            end))
        assert.is_false(prune.is_pruned(l))
        -- global_unstructured with a class by position, and one's own class
        local g = nn.Linear(3, 3)
        prune.global_unstructured({ { g, "weight" } }, prune.L1Unstructured, { amount = 2 })
        assert.are.equal(2, tide.sum(g.weight_mask:eq(0)):item())
        local First = prune.BasePruningMethod:extend("First")
        First.PRUNING_TYPE = "unstructured"
        function First:init(o)
            self.k = o.k
        end
        function First:compute_mask(_, default_mask)
            local mask = default_mask:clone()
            mask:view(-1)[{ { 1, self.k } }] = 0
            return mask
        end
        local h = nn.Linear(3, 3)
        prune.global_unstructured({ { h, "weight" } }, { pruning_method = First, k = 2 })
        assert.are.same({ 0, 0, 1, 1, 1, 1, 1, 1, 1 }, h.weight_mask:view(-1):totable())
        -- the class checks its arguments; a structured class needs its dim
        assert.are.equal("tide: L1Unstructured: amount = -1 must be an integer count or a " ..
            "fraction in [0, 1]", message(function() prune.L1Unstructured(-1) end))
        local S = prune.BasePruningMethod:extend("S")
        S.PRUNING_TYPE = "structured"
        function S:compute_mask(_, default_mask)
            return default_mask
        end
        assert.are.equal("tide: S.apply: a structured method needs the dim it prunes along " ..
            "(self.dim)", message(function() S.apply(nn.Linear(2, 2), "weight") end))
        -- PyTorch's classes applied by their apply, arguments by position or name
        local r = nn.Linear(3, 4)
        prune.LnStructured.apply(r, "weight", { amount = 2, n = 1, dim = 1 })
        assert.are.equal(2, tide.sum(r.weight_mask:sum(2):eq(0)):item())
        -- a user's hook is in the list as it was registered, and its handle takes it off
        local m = nn.Linear(2, 2)
        local function fn() end
        local handle = m:register_forward_pre_hook(fn)
        prune.identity(m, "bias")
        assert.are.equal(fn, m._forward_pre_hooks[1])
        assert.is_true(isinstance(m._forward_pre_hooks[2], prune.Identity))
        handle.remove()
        assert.are.equal(1, #m._forward_pre_hooks)
        prune.remove(m, "bias")
        assert.is_nil(m._forward_pre_hooks)
    end)
end)

---------------------------------------------------------------------------------------------
-- 3. intermediate_source/per_sample_grads.py and model_ensembling (ensembling.py)
---------------------------------------------------------------------------------------------
describe("per_sample_grads.py and ensembling.py (torch.func)", function()
    -- from torch.func import functional_call, vmap, grad
    local functional_call, vmap, grad = tide.func.functional_call, tide.func.vmap, tide.func.grad

    -- class SimpleCNN(nn.Module): (conv1 1->4, conv2 4->8, fc1 128->16 on 12x12 images)
    local SimpleCNN = nn.Module:extend("SimpleCNN")
    function SimpleCNN:init()
        -- self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        -- self.fc1 = nn.Linear(9216, 128)
        self.fc1 = nn.Linear(128, 16)
        self.fc2 = nn.Linear(16, 10)
    end

    function SimpleCNN:forward(x)
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = tide.flatten(x, 2)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        -- output = F.log_softmax(x, dim=1)
        local output = F.log_softmax(x, { dim = 2 })
        return output
    end

    local function loss_fn(predictions, targets)
        return F.nll_loss(predictions, targets)
    end

    it("per-sample gradients: a loop of autograd.grad, then vmap(grad(compute_loss))",
        function()
            -- torch.manual_seed(0)
            tide.manual_seed(0)
            local batch_size = 6
            -- data = torch.randn(batch_size, 1, 28, 28, device=device)
            local data = tide.randn(batch_size, 1, 12, 12)
            -- targets = torch.randint(10, (64,), device=device)
            local targets = tide.randint(1, 11, { batch_size })

            local model = SimpleCNN()
            local predictions = model(data) -- move the entire mini-batch through the model
            local loss = loss_fn(predictions, targets)
            loss:backward() -- back propagate the 'average' gradient of this mini-batch

            local function compute_grad(sample, target)
                -- sample = sample.unsqueeze(0)  # prepend batch dimension for processing
                sample = sample:unsqueeze(1)
                target = target:unsqueeze(1)

                local prediction = model(sample)
                local loss_ = loss_fn(prediction, target)

                -- return torch.autograd.grad(loss, list(model.parameters()))
                return tide.autograd.grad(loss_, model:parameters())
            end

            local function compute_sample_grads(data_, targets_)
                -- sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
                local sample_grads = {}
                for i = 1, batch_size do
                    sample_grads[i] = compute_grad(data_[i], targets_[i])
                end
                -- sample_grads = zip(*sample_grads)
                -- sample_grads = [torch.stack(shards) for shards in sample_grads]
                local stacked = {}
                for j = 1, #sample_grads[1] do
                    local shards = {}
                    for i = 1, batch_size do
                        shards[i] = sample_grads[i][j]
                    end
                    stacked[j] = tide.stack(shards)
                end
                return stacked
            end

            local per_sample_grads = compute_sample_grads(data, targets)
            -- print(per_sample_grads[0].shape)
            assert.are.same({ batch_size, 4, 1, 3, 3 }, per_sample_grads[1].shape)

            -- params = {k: v.detach() for k, v in model.named_parameters()}
            local params = {}
            for k, v in model:named_parameters() do
                params[k] = v:detach()
            end
            local buffers = {}
            for k, v in model:named_buffers() do
                buffers[k] = v:detach()
            end

            local function compute_loss(params_, buffers_, sample, target)
                local batch = sample:unsqueeze(1)
                local targets_ = target:unsqueeze(1)

                -- predictions = functional_call(model, (params, buffers), (batch,))
                local predictions_ = functional_call(model, { params_, buffers_ }, { batch })
                local loss_ = loss_fn(predictions_, targets_)
                return loss_
            end

            local ft_compute_grad = grad(compute_loss)
            -- ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
            local ft_compute_sample_grad = vmap(ft_compute_grad,
                { in_dims = { nil, nil, 1, 1 } })
            local ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)

            -- for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads.values()):
            --     assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
            -- (a Lua table keeps no insertion order: the names come from named_parameters)
            for i, pair in ipairs(model:named_parameters()) do
                local per_sample_grad, ft_per_sample_grad = per_sample_grads[i],
                    ft_per_sample_grads[pair[1]]
                assert.is_true(tide.allclose(per_sample_grad, ft_per_sample_grad,
                    { atol = 3e-3, rtol = 1e-5 }), pair[1])
            end
            -- the transforms leave .grad alone
            assert.is_truthy(model.fc2.bias.grad)
        end)

    it("per-sample gradients: PyTorch's values (functorch) on fixed weights", function()
        local model = SimpleCNN()
        tide.no_grad(function()
            for i, p in ipairs(model:parameters()) do
                local k = i - 1
                p:copy_(tide.arange(p:numel()):to("float32"):mul(0.37 + k):sin():view_as(p) *
                    (0.5 / (k + 1)))
            end
        end)
        local data = tide.arange(3 * 144):to("float32"):mul(0.7):cos():view(3, 1, 12, 12)
        local targets = tide.tensor({ 4, 1, 8 }) -- PyTorch's [3, 0, 7]
        local params, buffers = {}, {}
        for k, v in model:named_parameters() do
            params[k] = v:detach()
        end
        local function compute_loss(params_, buffers_, sample, target)
            local batch = sample:unsqueeze(1)
            local targets_ = target:unsqueeze(1)
            local predictions = functional_call(model, { params_, buffers_ }, { batch })
            return loss_fn(predictions, targets_)
        end
        local g = vmap(grad(compute_loss), { in_dims = { nil, nil, 1, 1 } })(params, buffers,
            data, targets)
        near_list(g["fc2.bias"][1], { 0.10083504766225815, 0.10626765340566635,
            0.10267925262451172, -0.903982400894165, 0.09379543364048004, 0.09661395847797394,
            0.10062142461538315, 0.10267072916030884, 0.10193075239658356, 0.09856812655925751 },
            1e-5, "fc2.bias[1]")
        near_list(g["conv1.bias"][2], { 0.007121928036212921, 0.009080659598112106,
            -0.010527487844228745, -0.046603478491306305 }, 1e-5, "conv1.bias[2]")
        near_list(g["fc1.weight"]:abs():sum({ 2, 3 }), { 9.523606300354004, 8.98210620880127,
            13.862126350402832 }, 1e-3, "|fc1.weight| per sample")
    end)

    it("model ensembling: stack_module_state, a stateless copy, vmap over models", function()
        -- class SimpleMLP(nn.Module): (784 -> 128 -> 128 -> 10 shrunk to 36 -> 16 -> 16 -> 10)
        local SimpleMLP = nn.Module:extend("SimpleMLP")
        function SimpleMLP:init()
            self.fc1 = nn.Linear(36, 16)
            self.fc2 = nn.Linear(16, 16)
            self.fc3 = nn.Linear(16, 10)
        end

        function SimpleMLP:forward(x)
            -- x = x.flatten(1)
            x = x:flatten(2)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            x = F.relu(x)
            x = self.fc3(x)
            return x
        end

        tide.manual_seed(0)
        local device = "cpu"
        local num_models = 3

        -- data = torch.randn(100, 64, 1, 28, 28, device=device)
        local data = tide.randn(4, 5, 1, 6, 6, { device = device })
        -- targets = torch.randint(10, (6400,), device=device)
        local targets = tide.randint(1, 11, { 20 }, { device = device })
        assert.are.same({ 20 }, targets.shape)

        -- models = [SimpleMLP().to(device) for _ in range(num_models)]
        local models = {}
        for i = 1, num_models do
            models[i] = SimpleMLP():to(device)
        end

        -- minibatches = data[:num_models]
        local minibatches = data[{ { 1, num_models } }]
        -- predictions_diff_minibatch_loop = [model(minibatch) for model, minibatch in zip(models, minibatches)]
        local predictions_diff_minibatch_loop = {}
        for i, model in ipairs(models) do
            predictions_diff_minibatch_loop[i] = model(minibatches[i])
        end

        -- minibatch = data[0]
        local minibatch = data[1]
        -- predictions2 = [model(minibatch) for model in models]
        local predictions2 = {}
        for i, model in ipairs(models) do
            predictions2[i] = model(minibatch)
        end

        -- params, buffers = stack_module_state(models)
        local params, buffers = tide.func.stack_module_state(models)

        -- base_model = copy.deepcopy(models[0])
        local base_model = tide.deepcopy(models[1])
        -- base_model = base_model.to('meta'): tide has no meta device; functional_call swaps in
        -- every parameter and buffer, so the copy's own tensors are never read
        assert.are.equal("tide: Module:to: tide has no \"meta\" device (tensors with a shape " ..
            "and no storage); a stateless copy for tide.func.functional_call needs none: " ..
            "keep tide.deepcopy(model) as it is, functional_call swaps in every parameter " ..
            "and buffer", message(function() base_model:to("meta") end))

        local function fmodel(params_, buffers_, x)
            -- return functional_call(base_model, (params, buffers), (x,))
            return functional_call(base_model, { params_, buffers_ }, { x })
        end

        -- print([p.size(0) for p in params.values()]) # show the leading 'num_models' dimension
        for _, p in pairs(params) do
            assert.are.equal(num_models, p:size(1))
        end

        -- assert minibatches.shape == (num_models, 64, 1, 28, 28)
        assert.are.same({ num_models, 5, 1, 6, 6 }, minibatches.shape)

        -- predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
        local predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
        -- assert torch.allclose(predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5)
        assert.is_true(tide.allclose(predictions1_vmap, tide.stack(predictions_diff_minibatch_loop),
            { atol = 1e-3, rtol = 1e-5 }))
        -- the same with in_dims=(0, 0, 0) spelled out
        local predictions1b = vmap(fmodel, { in_dims = { 1, 1, 1 } })(params, buffers, minibatches)
        assert.is_true(tide.allclose(predictions1b, predictions1_vmap,
            { atol = 1e-3, rtol = 1e-5 }))

        -- predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
        local predictions2_vmap = vmap(fmodel, { in_dims = { 1, 1, nil } })(params, buffers,
            minibatch)
        assert.is_true(tide.allclose(predictions2_vmap, tide.stack(predictions2),
            { atol = 1e-3, rtol = 1e-5 }))
    end)
end)
