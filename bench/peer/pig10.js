// Pig 10 as a boardgame.io game, served in memory by boardgame.io's own Server (its default
// InMemory storage and socket.io transport): the peer that bench/peer.py measures us against.
// The rules are ours (docs/rules/pig10.md), for the two seats the bench plays: a card onto the
// pile, exactly 10 wins the pile, more hands it to the seat that played the card before; the
// mover draws while the draw pile lasts; a seat with no cards left is skipped; most cards won
// wins. Each seat sees only its own hand and the size of the draw pile, as in our views.
//
//     PORT=24001 NODE_ENV=production node pig10.js     (prints "listening <port>" once it serves)
'use strict';

const { Server } = require('boardgame.io/server');
const { INVALID_MOVE } = require('boardgame.io/core');

const TARGET = 10;
const FROG = 0;
const PIGMAID = 5;
const HAND_SIZE = 3;
const DECK_COUNTS = [7, 8, 8, 8, 8, 5, 8, 8, 8, 8, 4]; // cards of each value 0..10, 80 in all

function modesFor(G, card) {
  if (card === FROG) return ['set'];
  if (G.pile.length === 0) return ['add'];
  const modes = ['add'];
  if (card === PIGMAID && G.value >= PIGMAID) modes.push('subtract');
  if (card === G.pile[G.pile.length - 1].card || card === G.value) modes.push('set');
  return modes;
}

function valueAfter(value, card, mode) {
  if (mode === 'set') return card;
  if (mode === 'subtract') return value - card;
  return value + card;
}

function hasCards(G, seat) {
  return G.hands[seat].length > 0;
}

function play({ G, playerID }, card, mode) {
  const hand = G.hands[playerID];
  const index = hand.indexOf(card);
  if (index < 0 || !modesFor(G, card).includes(mode)) return INVALID_MOVE;
  hand.splice(index, 1);
  G.value = valueAfter(G.value, card, mode);
  G.pile.push({ seat: Number(playerID), card });
  if (G.value >= TARGET) {
    const winner = G.value === TARGET ? Number(playerID) : G.pile[G.pile.length - 2].seat;
    G.won[winner] += G.pile.length;
    G.pile = [];
    G.value = 0;
  }
  if (G.deck.length > 0) {
    hand.push(G.deck.pop());
    hand.sort((a, b) => a - b);
  }
}

const Pig10 = {
  name: 'pig10',
  minPlayers: 2,
  maxPlayers: 8,

  setup: ({ ctx, random }) => {
    const deck = random.Shuffle(DECK_COUNTS.flatMap((count, value) => Array(count).fill(value)));
    const hands = {};
    for (let seat = 0; seat < ctx.numPlayers; seat++) {
      hands[seat] = deck.splice(0, HAND_SIZE).sort((a, b) => a - b);
    }
    const won = Array(ctx.numPlayers).fill(0);
    return { hands, deck, pile: [], value: 0, won, first: random.Die(ctx.numPlayers) - 1 };
  },

  turn: {
    minMoves: 1,
    maxMoves: 1,
    order: {
      first: ({ G }) => G.first,
      // While the draw pile lasts every hand is refilled to three, so nobody is skipped.
      next: ({ G, ctx }) => {
        for (let step = 1; step <= ctx.numPlayers; step++) {
          const seat = (ctx.playOrderPos + step) % ctx.numPlayers;
          if (hasCards(G, seat)) return seat;
        }
        return undefined;
      },
    },
  },

  moves: { play },

  endIf: ({ G, ctx }) => {
    if (G.deck.length > 0) return undefined;
    for (let seat = 0; seat < ctx.numPlayers; seat++) if (hasCards(G, seat)) return undefined;
    const best = Math.max(...G.won);
    const winners = G.won.flatMap((won, seat) => (won === best ? [String(seat)] : []));
    return winners.length === 1 ? { winner: winners[0] } : { draw: true, winners };
  },

  playerView: ({ G, playerID }) => ({
    hand: playerID in G.hands ? G.hands[playerID] : [],
    handSizes: Object.values(G.hands).map((hand) => hand.length),
    drawPile: G.deck.length,
    pile: G.pile,
    value: G.value,
    won: G.won,
  }),
};

const port = Number(process.env.PORT || 8000);
const server = Server({ games: [Pig10], origins: [] });
server.run(port, () => console.log(`listening ${port}`));
