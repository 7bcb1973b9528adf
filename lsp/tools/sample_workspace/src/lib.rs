pub fn area(w: u32, h: u32) -> u32 {
    let a = w * h
    a
}
