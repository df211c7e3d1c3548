mod retry;
