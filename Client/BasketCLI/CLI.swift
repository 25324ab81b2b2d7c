public enum BasketCLI {}
