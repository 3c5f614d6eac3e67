/**
 * A bike shop's FAQ as text sources (title, text): more passages than a prompt takes (5), none about
 * dogs. Tests of improved answers ask about dogs.
 */
export const SHOP_FAQ: Array<[string, string]> = [
  ['Opening hours', 'The shop opens at nine in the morning and closes at six in the evening, Monday to Saturday.'],
  ['Repairs', 'Our workshop services every brand of bicycle; a standard service costs 60 euros and takes two days.'],
  ['Test rides', 'Test rides are free: bring an identity card and we lend you any bike in stock for an hour.'],
  ['Delivery', 'We deliver bikes within 50 km for 25 euros, fully assembled and adjusted to the rider.'],
  [
    'Payment',
    'We take cards, cash and bank transfers; bikes over 1000 euros can be paid in twelve monthly instalments.',
  ],
  ['Warranty', 'Frames carry a ten-year warranty, motors and batteries two years, from the date of purchase.'],
  ['Returns', 'Unused accessories can be returned within 30 days with the receipt for a full refund.'],
  ['Parking', 'Customers park for free in the courtyard behind the shop; the entrance is on Mill Street.'],
  ['Rentals', 'City bikes rent for 15 euros a day and e-bikes for 35 euros a day, helmet and lock included.'],
  ['Trade-in', 'We buy back your old bicycle when you buy a new one, after a free inspection of its condition.'],
  ['Fitting', 'A professional bike fitting takes ninety minutes and costs 120 euros, refunded if you buy a bike.'],
  ['Children', 'Our children’s range starts with balance bikes for two-year-olds and grows up to 26-inch wheels.'],
  ['Gift cards', 'Gift cards are sold in the shop from 10 to 500 euros and are valid for three years.'],
  ['Batteries', 'E-bike batteries are recycled free of charge at the counter, whatever shop they came from.'],
  ['Events', 'On the first Sunday of each month we lead a free group ride of 40 km, leaving at ten from the shop.'],
];
