-- tide.optim: SGD, Adam, AdamW (pure Lua; state lives on each parameter's device)
return {
    Optimizer = require "tide.optim.Optimizer",
    SGD = require "tide.optim.SGD",
    Adam = require "tide.optim.Adam",
    AdamW = require "tide.optim.AdamW",
}
