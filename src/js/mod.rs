mod hot_calls;
mod key_arg;
mod retry_plugin;
