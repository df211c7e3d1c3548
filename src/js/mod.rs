mod key_arg;
mod retry_plugin;
