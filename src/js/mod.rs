mod retry_plugin;
