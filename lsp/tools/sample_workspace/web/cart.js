// Shopping cart
export function addItem(cart, item) {
  cart.items.push(item;
  return cart;
}
