-- tide.optim: SGD, Adam, AdamW, RMSprop, Adagrad, lr_scheduler (pure Lua; state lives on each parameter's device)
return {
    Optimizer = require "tide.optim.Optimizer",
    SGD = require "tide.optim.SGD",
    Adam = require "tide.optim.Adam",
    AdamW = require "tide.optim.AdamW",
    RMSprop = require "tide.optim.RMSprop",
    Adagrad = require "tide.optim.Adagrad",
    lr_scheduler = require "tide.optim.lr_scheduler",
}
