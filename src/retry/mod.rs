pub fn placeholder() -> u32 {
    1
}

#[cfg(test)]
mod tests {
    #[test]
    fn works() {
        assert_eq!(super::placeholder(), 1);
    }
}
