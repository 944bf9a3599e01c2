"""contend.training: the training runs of the Netscope models."""
